"""The ratings front door (`vbfa_lit.recommend.VBPCARecommender`): triples in as arrays, pandas or Dask DataFrames with
named columns, any ids; the orientation; predictions equal to VBPCA's on the fitted matrix; users and items never seen;
bad input refused with the argument named."""
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from vbfa_lit.ratings import make_ratings
from vbfa_lit.recommend import VBPCARecommender

pd = pytest.importorskip('pandas')


@pytest.fixture(scope='module')
def ratings():
    return make_ratings(120, 70, 2500, random_state=0)


@pytest.fixture(scope='module')
def fitted(ratings):
    r = ratings
    return VBPCARecommender(n_components=5, random_state=0, tol=1e-5).fit(np.c_[r.users, r.items], r.ratings)


def small(**kw):
    return VBPCARecommender(n_components=5, random_state=0, tol=1e-5, **kw)


@pytest.fixture(scope='module')
def oriented(ratings):
    "The ratings fitted with each orientation asked for explicitly (two tests read the same two fits)."
    r = ratings
    return {o: small(orientation=o).fit(np.c_[r.users, r.items], r.ratings)
            for o in ('users-by-items', 'items-by-users')}


def test_arrays_three_columns_and_dataframes_give_the_same_fit(ratings, fitted):
    r = ratings
    pairs = np.c_[r.users[:50], r.items[:50]]
    want = fitted.predict(pairs)
    frame = pd.DataFrame({'who': r.users, 'what': r.items, 'stars': r.ratings})
    for rec, X in [(small().fit(np.c_[r.users, r.items, r.ratings]), pairs),
                   (small(columns=('who', 'what', 'stars')).fit(frame), frame.iloc[:50]),
                   (small(columns=('who', 'what', 'stars')).fit(frame[['who', 'what']], frame['stars']), pairs)]:
        np.testing.assert_allclose(rec.predict(X), want, rtol=1e-10)


def test_dask_dataframe(ratings, fitted):
    dd = pytest.importorskip('dask.dataframe')
    r = ratings
    frame = dd.from_pandas(pd.DataFrame({'user': r.users, 'item': r.items, 'rating': r.ratings}), npartitions=3)
    rec = small().fit(frame)
    np.testing.assert_allclose(rec.predict(np.c_[r.users[:40], r.items[:40]]),
                               fitted.predict(np.c_[r.users[:40], r.items[:40]]), rtol=1e-10)


def test_string_ids(ratings, fitted):
    r = ratings
    users, items = np.array([f'u{k}' for k in r.users]), np.array([f'film {k}' for k in r.items])
    rec = small().fit(pd.DataFrame({'user': users, 'item': items, 'rating': r.ratings}))
    # ids sort differently as strings: the same matrix with rows and columns permuted, so the fit differs only by
    # the random start; compare what the data determine
    assert rec.orientation_ == fitted.orientation_
    pred = rec.predict(np.c_[users[:30], items[:30]])
    assert np.corrcoef(pred, fitted.predict(np.c_[r.users[:30], r.items[:30]]))[0, 1] > 0.95
    assert rec.predict([['nobody', 'film 0']]).shape == (1,)


def test_orientation_puts_the_more_numerous_side_on_the_rows(ratings, fitted, oriented):
    assert fitted.orientation_ == 'users-by-items' and fitted.matrix_.shape[0] == 120     # 120 users, 70 items
    r = ratings
    swapped = small().fit(np.c_[r.items, r.users], r.ratings)                              # 70 users, 120 items
    assert swapped.orientation_ == 'items-by-users' and swapped.matrix_.shape[0] == 120
    for orientation, rec in oriented.items():
        assert rec.orientation_ == orientation


@pytest.mark.parametrize('orientation', ['users-by-items', 'items-by-users'])
def test_seen_pairs_are_vbpca_predictions(ratings, oriented, orientation):
    r = ratings
    rec = oriented[orientation]
    k = np.arange(0, len(r.ratings), 37)
    rows, cols = (r.users[k], r.items[k]) if orientation == 'users-by-items' else (r.items[k], r.users[k])
    mean, std = rec.predict(np.c_[r.users[k], r.items[k]], return_std=True)
    want, want_std = rec.model_.predict_entries(rec.matrix_, rows, cols, return_std=True)
    np.testing.assert_allclose(mean, want, rtol=1e-12)
    np.testing.assert_allclose(std, want_std, rtol=1e-12)
    err = np.sqrt(np.mean((rec.predict(np.c_[r.users, r.items]) - r.ratings) ** 2))
    assert err < np.std(r.ratings)


def test_unseen_users_and_items(fitted):
    rec, m = fitted, fitted.model_                    # users on the rows, items on the columns
    mean, std = rec.predict([[10_000, 3], [5, 10_000], [10_000, 10_000]], return_std=True)
    assert np.all(np.isfinite(mean)) and np.all(std > 0)
    # a new user is an empty row: latent variables and bias at their priors, the item's mean
    np.testing.assert_allclose(mean[0], m.mean_[3], rtol=1e-12)


def test_unseen_item_uses_the_learned_prior(fitted):
    rec, m = fitted, fitted.model_
    assert m.mean_prior == 'learned' and rec.matrix_.shape[1] == len(rec.items_) + 1
    spare = rec.matrix_.shape[1] - 1
    mean = rec.predict([[5, 10_000]])
    np.testing.assert_allclose(mean, m.predict_entries(rec.matrix_, [5], [spare]), rtol=1e-12)


def test_clone_and_params():
    rec = VBPCARecommender(n_components=7, orientation='items-by-users')
    assert clone(rec).get_params()['n_components'] == 7
    with pytest.raises(NotFittedError):
        rec.predict([[0, 0]])


@pytest.mark.parametrize('kw, X, y, err, match', [
    ({}, np.zeros((5, 4)), None, ValueError, 'X: expected a DataFrame'),
    ({}, np.c_[[0, 1, 2], [0, 1, 2]], None, ValueError, 'y: the ratings are missing'),
    ({}, np.c_[[0, 1, 2], [0, 1, 2]], [1.0, 2.0], ValueError, 'y: expected 3 ratings'),
    ({}, np.c_[[0, 1, 2], [0, 1, 2]], [1.0, np.nan, 2.0], ValueError, 'y: ratings must be finite'),
    ({}, np.c_[[0, 1, 2], [0, 1, 2]], ['a', 'b', 'c'], TypeError, 'y: expected numeric'),
    ({}, np.c_[[0, 0, 1], [1, 1, 0]], [1.0, 2.0, 3.0], ValueError, r'pair \(user 0, item 1\) is rated more than once'),
    ({}, np.c_[[0, 0, 0], [0, 1, 2]], [1.0, 2.0, 3.0], ValueError, 'at least 2 users'),
    ({'orientation': 'sideways'}, np.c_[[0, 1], [0, 1]], [1.0, 2.0], ValueError, 'orientation'),
    ({'columns': ('user', 'item')}, np.c_[[0, 1], [0, 1]], [1.0, 2.0], ValueError, 'columns: expected three'),
    ({}, np.c_[[0, 1, 2], [0, 1, 2]], np.ones((3, 1)), ValueError, 'y: expected 3 ratings'),
])
def test_bad_input_is_refused_by_name(kw, X, y, err, match):
    with pytest.raises(err, match=match):
        VBPCARecommender(**kw).fit(X, y)


def test_bad_frames_and_predict_arguments(fitted):
    with pytest.raises(ValueError, match="X: expected a column named 'rating'"):
        VBPCARecommender().fit(pd.DataFrame({'user': [0, 1], 'item': [0, 1], 'score': [1.0, 2.0]}))
    with pytest.raises(TypeError, match='return_std'):
        fitted.predict([[0, 0]], return_std=1)
    with pytest.raises(ValueError, match="X: expected a column named 'item'"):
        fitted.predict(pd.DataFrame({'user': [0]}))
    with pytest.raises(TypeError, match='user ids: ids must be of one comparable kind'):
        VBPCARecommender().fit(np.array([[0, 0], ['a', 1], [2, 2]], dtype=object), [1.0, 2.0, 3.0])
