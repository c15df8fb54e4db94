"""The real-ratings benchmark's reading of its second set (ml-latest-small) and its targets, on files and results the
tests make: a missing file says where it goes, a file that is not the checked one is refused, the targets compare the
right rows."""
import hashlib
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'benchmarks'))
import bench_movielens as bm  # noqa: E402


def test_latest_small_missing_says_where_it_goes(tmp_path, monkeypatch):
    monkeypatch.setenv('VBFA_LIT_DATA', str(tmp_path))
    with pytest.raises(FileNotFoundError, match='ml-latest-small/ratings.csv'):
        bm.latest_small()


def test_latest_small_refuses_another_file_and_reads_the_checked_one(tmp_path, monkeypatch):
    monkeypatch.setenv('VBFA_LIT_DATA', str(tmp_path))
    path = tmp_path / 'movielens' / 'ml-latest-small' / 'ratings.csv'
    path.parent.mkdir(parents=True)
    text = b'userId,movieId,rating,timestamp\n1,10,4.5,964982703\n2,10,0.5,964982704\n2,31,3.0,964982705\n'
    path.write_bytes(text)
    with pytest.raises(ValueError, match='SHA-256'):
        bm.latest_small()
    monkeypatch.setattr(bm, 'LATEST_SMALL_SHA256', hashlib.sha256(text).hexdigest())
    users, items, ratings = bm.latest_small()
    assert users.tolist() == [1, 2, 2] and items.tolist() == [10, 10, 31] and ratings.tolist() == [4.5, 0.5, 3.0]
    assert bm.scale(dict(dataset='latest_small')) == (0.5, 5.0) and bm.scale({}) == (1.0, 5.0)


def _case(rmse, orientation=None):
    return dict(rmse=rmse, fit_cpu_s=1.0, fit_wall_s=1.0, predict_cpu_s=0.1, orientation=orientation)


def test_targets_compare_each_set_with_its_own_rows():
    results = dict(door_auto=_case(0.89, 'items-by-users'), door_users_by_items=_case(0.95, 'users-by-items'),
                   surprise_baselineonly=_case(0.94), surprise_svdpp=_case(0.91),
                   door_auto_latest_small=_case(0.87, 'items-by-users'),
                   door_users_by_items_latest_small=_case(0.871, 'users-by-items'),
                   surprise_baselineonly_latest_small=_case(0.86))
    s = bm.summarise(results)
    assert {r['case']: r['dataset'] for r in s['rows']}['surprise_baselineonly_latest_small'] == 'ml-latest-small'
    met = {t['target']: t['met'] for t in s['targets']}
    assert met["the front door's RMSE below BaselineOnly's"] is True                  # 0.89 < 0.94 (MovieLens-100k)
    assert met["ml-latest-small: the front door's RMSE below BaselineOnly's"] is False  # 0.87 > 0.86
    assert met['MovieLens-100k: the two orientations within 1% RMSE'] is False        # 0.89 against 0.95
    assert met['ml-latest-small: the two orientations within 1% RMSE'] is True         # 0.87 against 0.871
    gap = [t for t in s['targets'] if t['target'].startswith('ml-latest-small: the two')][0]['ratio']
    assert np.isclose(gap, abs(0.87 / 0.871 - 1))
