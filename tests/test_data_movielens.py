"""MovieLens-100k's ratings file on its own: `load_movielens_100k` reads a verified ``movielens/ml-100k/u.data`` from
the data home (the archive's file, unpacked or copied from a mirror), and refuses one that is not the archive's."""
import hashlib

import numpy as np
import pytest

from vbfa_lit import data
from vbfa_lit.data import ChecksumError, load_movielens_100k

RATINGS = [(1, 2, 5, 881250949), (2, 1, 3, 891717742), (3, 3, 1, 878887116), (1, 3, 4, 884182806)]


def write(home, text, items=None):
    folder = home / 'movielens' / 'ml-100k'
    folder.mkdir(parents=True)
    (folder / 'u.data').write_text(text)
    if items is not None: (folder / 'u.item').write_text(items, encoding='latin-1')
    return 'sha256:' + hashlib.sha256(text.encode()).hexdigest()


def test_a_verified_ratings_file_in_the_data_home_is_read_without_the_archive(tmp_path, monkeypatch):
    text = ''.join('\t'.join(map(str, r)) + '\n' for r in RATINGS)
    monkeypatch.setattr(data, 'MOVIELENS_100K_UDATA_SHA256',
                        write(tmp_path, text, 'x|Toy Story (1995)|\ny|GoldenEye (1995)|\nz|Four Rooms (1995)|\n'))
    ml = load_movielens_100k(data_home=tmp_path, download=False, urls=['http://127.0.0.1:9/never-asked'])
    np.testing.assert_array_equal(np.c_[ml.user_id, ml.item_id, ml.rating, ml.timestamp], RATINGS)
    assert ml.ratings.shape == (3, 3) and ml.ratings[0, 1] == 5 and np.isnan(ml.ratings[0, 0])
    assert ml.item_titles == ['Toy Story (1995)', 'GoldenEye (1995)', 'Four Rooms (1995)']
    monkeypatch.setenv('VBFA_LIT_DATA', str(tmp_path))                  # the data home from the environment
    assert load_movielens_100k(download=False).item_titles[1] == 'GoldenEye (1995)'


def test_a_ratings_file_that_is_not_the_archives_is_refused(tmp_path, monkeypatch):
    write(tmp_path, '1\t2\t5\t881250949\n')
    monkeypatch.setattr(data, 'MOVIELENS_100K_UDATA_SHA256', 'sha256:' + '0' * 64)
    with pytest.raises(ChecksumError, match=r"u\.data is not the archive's"):
        load_movielens_100k(data_home=tmp_path, download=False)


def test_without_the_file_the_archive_is_looked_for(tmp_path):
    with pytest.raises(FileNotFoundError, match='ml-100k.zip is not in the cache'):
        load_movielens_100k(data_home=tmp_path, download=False)
    assert not (tmp_path / 'movielens' / 'ml-100k').exists()


def test_the_real_file_when_it_is_in_the_data_home():
    "The checksum in the library is the real file's (skipped where the data home does not hold it)."
    path = data.get_data_home() / 'movielens' / 'ml-100k' / 'u.data'
    if not path.is_file(): pytest.skip(f"MovieLens-100k's u.data is not in the data home ({path})")
    ml = load_movielens_100k(download=False)
    assert len(ml.rating) == 100_000 and ml.ratings.shape == (943, 1682)
