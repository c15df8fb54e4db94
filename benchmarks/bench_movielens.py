"""Real ratings: MovieLens-100k (GroupLens; 943 users, 1,682 films, 100,000 ratings 1-5), the ratings front door
(`vbfa_lit.recommend.VBPCARecommender`) beside Surprise's `BaselineOnly`, `SVD` and `SVD++` (scikit-surprise, their
default settings), on one random 80/20 split of the ratings (seed 1), the same for every method.

The data: MovieLens' licence forbids redistribution, so the file is never in this repository. The benchmark reads
the ratings file from the data home (`vbfa_lit.data.get_data_home()`, ``~/.cache/vbfa_lit`` unless ``VBFA_LIT_DATA``
says otherwise) through `load_movielens_100k(download=False)`: either the archive ``movielens/ml-100k.zip`` from
https://files.grouplens.org/datasets/movielens/ml-100k.zip, or its ratings file alone, unpacked, as
``movielens/ml-100k/u.data`` (both checked against their SHA-256). `load_movielens_100k()` with a network downloads
the archive there. Without either, a full run records the case's error, which says this; ``--quick`` runs on
generated ratings of the same form (`make_ratings`, 200 x 300, 8,000 ratings), whatever the data home holds,
and stops our fits after 20 sweeps.

Measured per method, in a fresh child process with one BLAS thread, over `rounds` interleaved rounds:
- the CPU and wall-clock seconds of `fit` on the 80,000 training triples (ours: `VBPCARecommender(random_state=0)`
  at its defaults, with the orientation given or chosen; a tiny fit first loads the compiled kernels from numba's disk
  cache, untimed; Surprise: `algo.fit(trainset)` on a trainset built beforehand, untimed);
- the RMSE of the 20,000 held-out ratings, every prediction clipped to 1..5 (Surprise clips its own), and the time of
  those predictions; how many held-out ratings have a user or film the training part never saw;
- ours: the orientation, the components ARD keeps and the sweeps.
Targets (the ratings issue): the front door with its defaults at RMSE <= 0.900, in less CPU time than SVD++, and below
BaselineOnly's RMSE.

A second, sparser real set (the cases ending in ``_latest_small``): GroupLens' ml-latest-small of 2018 (610 users,
9,724 rated films, 100,836 half-star ratings 0.5-5; 8% of the held-out ratings are of films the training part never
saw). Its ``ratings.csv`` is read from ``movielens/ml-latest-small/ratings.csv`` in the data home, checked against the
SHA-256 below (from https://files.grouplens.org/datasets/movielens/ml-latest-small.zip; GroupLens updates "latest"
now and then, and a newer file is refused, not silently compared with these numbers). Target: below BaselineOnly.
"""
import time
import warnings
import numpy as np
from harness import Case

QUICK = dict(generated=True, max_iter=20)


LATEST_SMALL_SHA256 = '80da8b3393dae325bbba5a31f291a6ba55d8d4f4396de3c456f2c1635b1b70e8'   # ratings.csv, 2,382,886 bytes


def latest_small():
    "ml-latest-small's (users, films, ratings) from the data home, its checksum verified."
    import hashlib
    from vbfa_lit.data import get_data_home
    path = get_data_home() / 'movielens' / 'ml-latest-small' / 'ratings.csv'
    if not path.is_file():
        raise FileNotFoundError(f"ml-latest-small is not in the data home: unpack ratings.csv of "
                                f"https://files.grouplens.org/datasets/movielens/ml-latest-small.zip to {path}")
    if hashlib.sha256(path.read_bytes()).hexdigest() != LATEST_SMALL_SHA256:
        raise ValueError(f"{path} is not the 2018 ml-latest-small ratings.csv these results are for (its SHA-256 "
                         f"differs from {LATEST_SMALL_SHA256})")
    t = np.loadtxt(path, delimiter=',', skiprows=1, usecols=(0, 1, 2))
    return t[:, 0].astype(np.int64), t[:, 1].astype(np.int64), t[:, 2]


def scale(p):
    "The rating scale of the set: half stars 0.5-5 for ml-latest-small, 1-5 otherwise."
    return (0.5, 5.0) if p.get('dataset') == 'latest_small' and not p.get('generated') else (1.0, 5.0)


def split(p):
    "The (users, items, ratings) triples and the boolean mask of the held-out fifth (seed 1, as every method)."
    if p.get('dataset') == 'latest_small' and not p.get('generated'):
        users, items, ratings = latest_small()
    elif p.get('generated'):
        from vbfa_lit.ratings import make_ratings
        r = make_ratings(200, 300, 8_000, random_state=0)
        users, items, ratings = r.users, r.items, r.ratings.astype(float)
    else:
        from vbfa_lit.data import get_data_home, load_movielens_100k
        try: ml = load_movielens_100k(download=False)
        except FileNotFoundError:
            raise FileNotFoundError(
                f"MovieLens-100k is not in the data home {get_data_home()}: run vbfa_lit.data.load_movielens_100k() "
                "once with a network (it downloads and verifies ml-100k.zip), or put the archive's ratings file at "
                f"{get_data_home() / 'movielens' / 'ml-100k' / 'u.data'}; benchmarks/bench_movielens.py says more"
            ) from None
        users, items, ratings = ml.user_id, ml.item_id, ml.rating.astype(float)
    return (users, items, ratings), np.random.default_rng(1).random(len(ratings)) < 0.2


def clock():
    return time.process_time(), time.perf_counter()


def since(t):
    c, w = clock()
    return c - t[0], w - t[1]


def unseen(users, items, test):
    "Held-out ratings whose user or film has no training rating."
    return int((~np.isin(users[test], users[~test]) | ~np.isin(items[test], items[~test])).sum())


def surprise(p):
    "Surprise's BaselineOnly, SVD or SVD++ at its default settings: fit on the training ratings, predict the rest."
    import pandas as pd
    from surprise import SVD, BaselineOnly, SVDpp, Dataset, Reader
    (users, items, ratings), test = split(p)
    train = pd.DataFrame(dict(user=users[~test], item=items[~test], rating=ratings[~test]))
    trainset = Dataset.load_from_df(train, Reader(rating_scale=scale(p))).build_full_trainset()
    algo = (BaselineOnly(verbose=False) if p['algo'] == 'BaselineOnly'
            else dict(SVD=SVD, SVDpp=SVDpp)[p['algo']](random_state=p['seed']))
    t = clock()
    algo.fit(trainset)
    fit_cpu, fit_wall = since(t)
    t = clock()
    pred = np.array([algo.predict(u, i).est for u, i in zip(users[test].tolist(), items[test].tolist())])
    pred_cpu, pred_wall = since(t)
    return dict(rmse=float(np.sqrt(np.mean((pred - ratings[test]) ** 2))), fit_cpu_s=fit_cpu, fit_wall_s=fit_wall,
                predict_cpu_s=pred_cpu, predict_wall_s=pred_wall, n_train=int((~test).sum()), n_test=int(test.sum()),
                n_test_unseen=unseen(users, items, test))


def ours(p):
    "The ratings front door at its defaults (the orientation given or chosen): fit on the training triples, predict."
    from vbfa_lit.recommend import VBPCARecommender
    (users, items, ratings), test = split(p)
    from vbfa_lit.ratings import make_ratings
    tiny = make_ratings(60, 80, 2000, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')             # a two-sweep warm-up does not converge
        VBPCARecommender(2, max_iter=2, random_state=0).fit(np.c_[tiny.users, tiny.items], tiny.ratings)
    it = {'max_iter': p['max_iter']} if 'max_iter' in p else {}   # the smoke run's: a few sweeps, converged or not
    rec = VBPCARecommender(orientation=p['orientation'], random_state=0, **it)
    t = clock()
    rec.fit(np.c_[users[~test], items[~test]], ratings[~test])
    fit_cpu, fit_wall = since(t)
    t = clock()
    pred = np.clip(rec.predict(np.c_[users[test], items[test]]), *scale(p))
    pred_cpu, pred_wall = since(t)
    return dict(rmse=float(np.sqrt(np.mean((pred - ratings[test]) ** 2))), fit_cpu_s=fit_cpu, fit_wall_s=fit_wall,
                predict_cpu_s=pred_cpu, predict_wall_s=pred_wall, orientation=rec.orientation_,
                components=int(rec.n_effective_components_), n_iter=int(rec.model_.n_iter_),
                converged=bool(rec.model_.converged_), n_train=int((~test).sum()), n_test=int(test.sum()),
                n_test_unseen=unseen(users, items, test))


LABELS = {'surprise_baselineonly': 'Surprise BaselineOnly', 'surprise_svd': 'Surprise SVD',
          'surprise_svdpp': 'Surprise SVD++', 'door_auto': 'VBPCARecommender, defaults ({orientation})',
          'door_users_by_items': 'VBPCARecommender, users by items'}
CASES = [Case('door_auto', ours, dict(orientation='auto'), quick=QUICK, rounds=3),
         Case('door_users_by_items', ours, dict(orientation='users-by-items'), quick=QUICK, rounds=3),
         Case('surprise_baselineonly', surprise, dict(algo='BaselineOnly'), quick=QUICK, needs=('surprise',), rounds=3),
         Case('surprise_svd', surprise, dict(algo='SVD'), quick=QUICK, needs=('surprise',), rounds=3),
         Case('surprise_svdpp', surprise, dict(algo='SVDpp'), quick=QUICK, needs=('surprise',), rounds=3),
         Case('door_auto_latest_small', ours, dict(orientation='auto', dataset='latest_small'), quick=QUICK, rounds=3),
         Case('door_users_by_items_latest_small', ours, dict(orientation='users-by-items', dataset='latest_small'),
              quick=QUICK, rounds=3),
         Case('surprise_baselineonly_latest_small', surprise, dict(algo='BaselineOnly', dataset='latest_small'),
              quick=QUICK, needs=('surprise',), rounds=3),
         Case('surprise_svd_latest_small', surprise, dict(algo='SVD', dataset='latest_small'), quick=QUICK,
              needs=('surprise',), rounds=3)]
SMOKE_ALSO = ('door_users_by_items',)


def summarise(results):
    "One row per method and set (RMSE, CPU seconds of the fit, orientation and components for ours) and the targets."
    rows = []
    for name, r in results.items():
        if 'rmse' not in r: continue
        first = r['rounds'][0] if r.get('rounds') else r
        base_name, _, suffix = name.partition('_latest_small')
        rows.append(dict(case=name, label=LABELS[base_name].format(orientation=first.get('orientation', '')),
                         dataset='ml-latest-small' if name.endswith('_latest_small') else 'MovieLens-100k',
                         rmse=r['rmse'], fit_cpu_s=r['fit_cpu_s'], fit_wall_s=r['fit_wall_s'],
                         predict_cpu_s=r['predict_cpu_s'], orientation=first.get('orientation'),
                         components=None if r.get('components') is None else int(round(r['components'])),
                         n_iter=None if r.get('n_iter') is None else int(round(r['n_iter'])),
                         generated=bool(first.get('params', {}).get('generated'))))
    by, targets = {r['case']: r for r in rows}, []
    door = by.get('door_auto')
    if door:
        targets.append(dict(target='the front door at its defaults: RMSE <= 0.900', measured=f"{door['rmse']:.4f}",
                            met=door['rmse'] <= 0.900))
        if 'surprise_svdpp' in by:
            pp = by['surprise_svdpp']
            targets.append(dict(target="the front door's fit in less CPU time than SVD++'s",
                                measured=f"{door['fit_cpu_s']:.2f} s against {pp['fit_cpu_s']:.2f} s CPU",
                                ratio=door['fit_cpu_s'] / pp['fit_cpu_s'], met=door['fit_cpu_s'] < pp['fit_cpu_s']))
        if 'surprise_baselineonly' in by:
            base = by['surprise_baselineonly']
            targets.append(dict(target="the front door's RMSE below BaselineOnly's",
                                measured=f"{door['rmse']:.4f} against {base['rmse']:.4f}", met=door['rmse'] < base['rmse']))
    door, base = by.get('door_auto_latest_small'), by.get('surprise_baselineonly_latest_small')
    if door and base:
        targets.append(dict(target="ml-latest-small: the front door's RMSE below BaselineOnly's",
                            measured=f"{door['rmse']:.4f} against {base['rmse']:.4f}", met=door['rmse'] < base['rmse']))
    for suffix, label in (('', 'MovieLens-100k'), ('_latest_small', 'ml-latest-small')):
        a, b = by.get('door_auto' + suffix), by.get('door_users_by_items' + suffix)
        if a and b and a['orientation'] != 'users-by-items':
            gap = abs(a['rmse'] / b['rmse'] - 1)
            targets.append(dict(target=f'{label}: the two orientations within 1% RMSE',
                                measured=f"{a['rmse']:.4f} ({a['orientation']}) against {b['rmse']:.4f} (users by items)",
                                ratio=gap, met=gap <= 0.01))
    return dict(rows=rows, targets=targets)
