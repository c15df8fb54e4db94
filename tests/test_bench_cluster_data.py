"""The synthetic ratings of `benchmarks/bench_cluster.py` (`ratings_block`): exactly min(n_ratings, users x films)
distinct ratings 1..5, made from (seed, block) alone, the films' factors shared by every block of one seed, and each
user's films drawn by popularity without replacement (both ways of drawing them give that one distribution)."""
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'benchmarks'))
import bench_cluster as bc  # noqa: E402


def check(X, n_rows, n_items, n_ratings):
    "Shape, exact count, no pair twice (indices sorted and strictly increasing in each row), values 1..5."
    assert X.shape == (n_rows, n_items)
    assert X.nnz == min(n_ratings, n_rows * n_items)
    assert X.has_canonical_format
    rows = np.repeat(np.arange(n_rows), np.diff(X.indptr))
    assert np.unique(rows.astype(np.int64) * n_items + X.indices).size == X.nnz
    assert set(np.unique(X.data)) <= {1.0, 2.0, 3.0, 4.0, 5.0}


@pytest.mark.parametrize('n_rows, n_items, n_ratings', [(1, 7, 3), (50, 30, 400), (400, 300, 20_000),
                                                        (2_000, 1_000, 100_000), (60, 40, 2_000), (30, 5, 0)])
def test_exact_count_of_distinct_ratings(n_rows, n_items, n_ratings):
    check(bc.ratings_block(7, 2, 100, 100 + n_rows, n_items, n_ratings), n_rows, n_items, n_ratings)


def test_every_pair_rated_when_the_target_is_every_pair():
    X = bc.ratings_block(1, 0, 0, 40, 25, 40 * 25)
    check(X, 40, 25, 40 * 25)
    assert np.all(X.toarray() >= 1)


def test_more_ratings_asked_than_pairs():
    X = bc.ratings_block(1, 3, 0, 12, 9, 10 ** 6)
    check(X, 12, 9, 12 * 9)
    assert np.all(X.toarray() >= 1)


def test_no_users():
    assert bc.ratings_block(0, 0, 5, 5, 10, 100).shape == (0, 10)


def test_deterministic_from_seed_and_block():
    args = (0, 4_000, 500, 60_000)
    X, Y = bc.ratings_block(3, 1, *args), bc.ratings_block(3, 1, *args)
    assert (X != Y).nnz == 0 and np.array_equal(X.indices, Y.indices)
    for other in (bc.ratings_block(3, 2, *args), bc.ratings_block(4, 1, *args)):
        assert not (np.array_equal(other.indptr, X.indptr) and np.array_equal(other.indices, X.indices))


def film_means(X):
    return np.asarray(X.sum(axis=0)).ravel() / np.diff(X.tocsc().indptr)


def test_film_factors_shared_across_blocks():
    "A film's mean rating is mostly its bias, from the seed only: two blocks of one seed agree, another seed does not."
    a, b = (film_means(bc.ratings_block(11, block, 0, 4_000, 60, 80_000)) for block in (0, 1))
    c = film_means(bc.ratings_block(12, 0, 0, 4_000, 60, 80_000))
    assert np.corrcoef(a, b)[0, 1] > 0.95
    assert abs(np.corrcoef(a, c)[0, 1]) < 0.5
    assert np.abs(a - b).max() < 0.25


def test_counts_follow_activity_and_films_follow_popularity():
    n_rows, n_items = 3_000, 400
    X = bc.ratings_block(5, 0, 0, n_rows, n_items, 90_000)
    rng = np.random.default_rng([5, 1, 0])                   # the activity, drawn as ratings_block draws it
    rng.standard_normal((n_rows, 5)), rng.standard_normal(n_rows)
    activity = rng.lognormal(0.0, 1.0, n_rows)
    assert np.corrcoef(np.diff(X.indptr), np.minimum(activity / activity.sum() * 90_000, n_items))[0, 1] > 0.95
    per_film = np.bincount(X.indices, minlength=n_items)
    assert per_film[:10].mean() > 3 * per_film[-100:].mean()
    assert np.corrcoef(per_film, np.log(bc.item_weights(n_items)))[0, 1] > 0.9


def test_users_capped_at_every_film():
    counts = bc.user_counts(np.random.default_rng(0), np.array([1.0, 100.0, 1.0, 1.0]), 30, 10)
    assert counts.sum() == 30 and counts.max() <= 10 and counts[1] == 10


def test_films_at_is_searchsorted():
    for n in (1, 3, 17, 500):
        cdf = np.cumsum(bc.item_weights(n))
        cdf[-1] = np.inf
        m = 16 * n
        guide = np.searchsorted(cdf, np.maximum(np.arange(m + 1) - 1, 0) / m, side='right')
        x = np.concatenate([np.random.default_rng(n).random(20_000), np.arange(m) / m,
                            np.nextafter(np.arange(1, m + 1) / m, 0), np.cumsum(bc.item_weights(n)),
                            np.nextafter(np.cumsum(bc.item_weights(n)), 0)])
        x = x[x < 1]
        assert np.array_equal(bc.films_at(x, cdf, guide), np.searchsorted(cdf, x, side='right'))


def inclusion_of_two(w):
    "P(film j among 2 films drawn without replacement by weights w) = w_j + sum_{i != j} w_i w_j / (1 - w_i)."
    pair = np.outer(w / (1 - w), w)
    np.fill_diagonal(pair, 0)
    return w + pair.sum(axis=0)


@pytest.mark.parametrize('n_items', [50, 4])
def test_films_drawn_without_replacement_by_popularity(n_items):
    """Users with 2 films each: how often each film is rated matches sampling without replacement, by both ways of
    drawing (50 films: draws with replacement, the first 2 distinct; 4 films: exponential keys)."""
    w = bc.item_weights(n_items)
    light = bc.draws_for(w, 2 + 2 * np.sqrt(2) + 2) <= n_items
    assert light == (n_items == 50)
    n_users = 20_000
    indptr, indices = bc.sample_films(np.random.default_rng(9), np.full(n_users, 2), w)
    assert np.array_equal(indptr, np.arange(0, 2 * n_users + 1, 2))
    assert np.all(indices[0::2] < indices[1::2])
    freq = np.bincount(indices, minlength=n_items) / n_users
    assert np.abs(freq - inclusion_of_two(w)).max() < 0.015


def test_worker_busy_counts_the_tasks_between_the_timed_sweeps_and_amdahl_bounds_two_workers():
    "`worker_busy` sums compute and transfer inside the window of the timed sweeps only; `amdahl` splits the rest."
    stamps = [(0, 0, 10.0), (0, 0, 11.0), (0, 0, 12.0), (0, 0, 13.0)]          # sweeps end at 10, 11, 12, 13 s
    ss = lambda a, b, act='compute': dict(start=a, stop=b, action=act)
    tasks = [dict(key='map_latent-ab12', startstops=[ss(9.5, 9.9)]),                # before the window: left out
             dict(key='map_latent-cd34', startstops=[ss(11.1, 11.5), ss(11.0, 11.1, 'transfer')]),
             dict(key=('_add-ef56', 0), startstops=[ss(12.2, 12.3)]),
             dict(key='block_errors-0a', startstops=[ss(12.9, 13.2)])]               # runs past the last sweep
    compute, transfer, by = bc.worker_busy(tasks, stamps)                        # window 11..13: two sweeps
    assert compute == pytest.approx((0.4 + 0.1) / 2) and transfer == pytest.approx(0.1 / 2)
    assert by == pytest.approx({'map_latent': 0.2, '_add': 0.05}) and list(by) == ['map_latent', '_add']
    assert bc.worker_busy(tasks, stamps[:2]) == (None, None, {})
    stalled = [dict(key=f'map_latent-{i}', startstops=[ss(t + 0.1, t + 0.1 + d)])   # one sweep the machine stalled
               for i, (t, d) in enumerate([(11.0, 0.2), (12.0, 0.2), (13.0, 0.8)])]
    compute, _, by = bc.worker_busy(stalled, stamps + [(0, 0, 14.0)])
    assert compute == pytest.approx(0.2) and by == pytest.approx({'map_latent': 0.2})   # the median, as per_sweep's
    one = dict(sweep_wall_s=1.0, worker_compute_s=0.6)
    a = bc.amdahl({'ml1m_D20_1worker': one})
    assert a['rest_1_s'] == pytest.approx(0.4) and a['best_2_s'] == pytest.approx(0.7)
    assert a['best_speedup'] == pytest.approx(1 / 0.7) and 'speedup' not in a
    two = dict(sweep_wall_s=0.8, worker_compute_s=0.65, worker_transfer_s=0.05)
    assert bc.amdahl({'ml1m_D20_1worker': one, 'ml1m_D20_2workers': two})['speedup'] == pytest.approx(1.25)
    assert bc.amdahl({'ml1m_D20_1worker': dict(sweep_wall_s=1.0)}) is None       # run without the task stream


def test_amdahl_gives_the_rest_that_two_workers_could_afford_and_the_least_the_waits_cost():
    "Two workers computing 0.65 s together against one's 0.6 s: the computing alone 1.85x; the rest for 1.7x solved."
    one = dict(sweep_wall_s=1.0, worker_compute_s=0.6, waits_per_sweep=2.0)       # medians over rounds are floats
    two = dict(sweep_wall_s=0.8, worker_compute_s=0.65, worker_transfer_s=0.05)
    a = bc.amdahl({'ml1m_D20_1worker': one, 'ml1m_D20_2workers': two})
    assert a['compute_speedup'] == pytest.approx(0.6 / 0.325) and 'round_trip_s' not in a
    r = a['rest_for_target_s']
    assert (0.6 + r) / (0.325 + r) == pytest.approx(bc.SCALING_TARGET)          # exactly the aimed speed-up
    slow = bc.amdahl({'ml1m_D20_1worker': one, 'ml1m_D20_2workers': dict(two, worker_compute_s=0.8)})
    assert slow['rest_for_target_s'] < 0                                         # the computing alone scales 1.5x
    a = bc.amdahl({'ml1m_D20_1worker': one, 'ml1m_D20_2workers': two, 'dask_round_trip': dict(round_trip_s=0.01)})
    assert a['waits_per_sweep'] == 2 and isinstance(a['waits_per_sweep'], int)
    assert a['waits_at_median_s'] == pytest.approx(0.02)


def test_the_waits_of_a_sweep_are_the_gathers_between_its_end_and_the_last_one():
    "`counting_gathers` counts a client's gathers into the clock's stamps; `waits_per_sweep` takes their median."
    class Client:
        def gather(self, x): return x
    client, clock = Client(), bc.SweepClock
    saved = clock.stamps, clock.waits
    try:
        clock.stamps, clock.waits = [], [0]
        bc.counting_gathers(client)
        for sweep, gathers in enumerate((5, 2, 2, 3, 2)):  # the first sweep loads the data: left out with the second
            for _ in range(gathers): assert client.gather(7) == 7
            clock.stamp(sweep, -1.0)
        assert [s[3] for s in clock.stamps] == [5, 7, 9, 12, 14]
        assert bc.waits_per_sweep(clock.stamps) == 2                              # median of 2, 3, 2
        assert bc.waits_per_sweep(clock.stamps[:2]) is None
    finally: clock.stamps, clock.waits = saved


def test_the_summary_gives_the_targets_and_both_shapes_scaling():
    "`summarise`: the seconds a sweep against their aims, the memory, the 1 -> 2 worker ratios (ML-1M's aimed)."
    run = lambda s, w, gb=1.0: dict(sweep_wall_s=s, workers=w, D=15, n_ratings=100, worker_peak_max_gb=gb)
    results = {'netflix_D15_1worker': run(12.0, 1), 'netflix_D15_2workers': run(7.0, 2, 4.1),
               'ml25m_D50_2workers': run(32.0, 2), 'ml1m_D20_1worker': run(0.32, 1), 'ml1m_D20_2workers': run(0.23, 2),
               'dask_round_trip': dict(round_trip_s=0.01)}
    out = bc.summarise(results)
    assert [r['case'] for r in out['rows']] == [k for k in results if k != 'dask_round_trip']
    t = {x['target'].split(':')[0].split(' (')[0]: x for x in out['targets']}
    assert t['netflix_D15_2workers']['met'] and not t['ml25m_D50_2workers']['met']
    assert t['Netflix shape']['met'] and t['Netflix shape']['measured'] == '4.1 GB'
    netflix = next(x for x in out['targets'] if x['target'].startswith('strong scaling 1 -> 2 workers at Netflix'))
    assert netflix['measured'] == f'{12 / 7:.2f}x' and netflix['met'] is None
    ml1m = next(x for x in out['targets'] if x['target'].startswith('strong scaling 1 -> 2 workers at MovieLens-1M'))
    assert ml1m['measured'] == f'{0.32 / 0.23:.2f}x' and ml1m['met'] is False
    assert out['scaling'] is None                                   # no task stream in these runs
