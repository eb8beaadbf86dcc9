"""The estimators' own behaviour: errors as exceptions, pickling and deepcopy through the
model file format, delayed feedback, top-k clicks, batches."""

import copy
import pickle

import pytest

import flowboost


def stream(n=300):
    for i in range(n):
        x = {"a": i % 10, "b": (i * 7) % 3, "colour": ["red", "blue"][i % 2]}
        yield x, x["a"] >= 5


def trained(cls=flowboost.AdaBoostOL, **params):
    model = cls(learners=3, seed=1, **params)
    for x, y in stream():
        model.learn_one(x, y)
    return model


def test_pickle_and_deepcopy_keep_the_model():
    model = trained()
    for other in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model)):
        assert other.feature_names == model.feature_names
        assert len(other.to_bytes()) == len(model.to_bytes())
        assert other.predict_one({"a": 8}) == model.predict_one({"a": 8})
    assert "colour=red" in model.feature_names


@pytest.mark.parametrize(
    "x, error",
    [
        ({"a": float("nan")}, ValueError),
        ({"a": float("inf")}, ValueError),
        ({"a": [1, 2]}, TypeError),
        ("not a dict", TypeError),
    ],
)
def test_bad_features_are_exceptions(x, error):
    model = trained()
    with pytest.raises(error):
        model.learn_one(x, True)


def test_bad_options_and_labels_are_exceptions():
    with pytest.raises(ValueError, match="learners"):
        flowboost.AdaBoostOL(learners=0)
    with pytest.raises(ValueError, match="weak"):
        flowboost.AdaBoostOL(weak="forest")
    with pytest.raises(ValueError, match="gamma"):
        flowboost.OnlineBBM(gamma=2.0)
    with pytest.raises(TypeError):
        flowboost.AdaBoostOL(learners="ten")
    model = flowboost.AdaBoostOL(learners=2)
    with pytest.raises(ValueError):
        model.learn_one({"a": 1}, "maybe")
    small = flowboost.AdaBoostOLM(learners=2, max_classes=2)
    small.learn_one({"a": 1}, "x")
    small.learn_one({"a": 1}, "y")
    with pytest.raises(ValueError, match="max_classes"):
        small.learn_one({"a": 1}, "z")
    narrow = flowboost.AdaBoostOL(learners=2, max_features=2)
    with pytest.raises(ValueError, match="columns"):
        narrow.learn_one({"a": 1, "b": 2, "c": 3}, True)


def test_a_damaged_model_file_is_a_model_file_error(tmp_path):
    model = trained()
    path = tmp_path / "m.fbm"
    model.save(path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(flowboost.ModelFileError):
        flowboost.load(path)
    with pytest.raises(flowboost.ModelFileError):
        flowboost.from_bytes(b"not a model")


def test_delayed_feedback_joins_by_id():
    model = trained()
    p = model.predict_one({"a": 9}, id="event-1")
    assert isinstance(p, bool)
    assert model.pending == 1
    assert model.learn_feedback("event-1", True) == "joined"
    assert model.learn_feedback("event-1", True) == "repeated"
    assert model.learn_feedback(42, False) == "held"


def test_top_k_clicks():
    model = flowboost.TopkBBM(learners=3, k=2, seed=1, classes=["a", "b", "c", "d"])
    for i in range(200):
        shown = model.rank_one({"x": i % 4}, id=i)
        assert len(shown) == 2
        model.learn_clicks(i, [s for s in shown if s == "abcd"[i % 4]])
    outcome = model.learn_clicks_one({"x": 1}, ["b", "a"], ["b"], [0.5])
    assert outcome == "joined"


def test_multilabel_learns_label_dicts():
    model = flowboost.AdaOLMR(learners=3, seed=1)
    for i in range(300):
        x = {"a": i % 4}
        model.learn_one(x, {"red": x["a"] >= 2, "blue": x["a"] % 2 == 1})
    assert set(model.predict_one({"a": 3})) == {"red", "blue"}
    assert sorted(model.predict_ranking_one({"a": 3})) == ["blue", "red"]


def test_batches_match_one_at_a_time():
    np = pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")
    rows = [(x, y) for x, y in stream()]
    X = pd.DataFrame([{k: v for k, v in x.items() if k != "colour"} for x, _ in rows])
    y = [y for _, y in rows]
    one = flowboost.AdaBoostOL(learners=3, seed=1)
    for x, label in zip(X.to_dict(orient="records"), y):
        one.learn_one(x, label)
    many = flowboost.AdaBoostOL(learners=3, seed=1)
    many.learn_many(X, pd.Series(y))
    assert many.to_bytes() == one.to_bytes()
    arr = flowboost.AdaBoostOL(learners=3, seed=1)
    arr.learn_many(X.to_numpy(), np.array(y))
    assert len(arr.predict_many(X.to_numpy())) == len(y)
    assert list(many.predict_proba_many(X).columns) == [False, True]


def test_predict_learn_many_is_predict_learn_one_over_a_batch(a9a_head):
    """One pass per row over a DataFrame block (the batch form of predict_learn_one):
    the same predictions and the same model, whatever the batch size; and the block's
    dense rows with explicit zeros learn what the file's sparse rows learn."""
    import json

    pd = pytest.importorskip("pandas")
    ds = flowboost.read_dataset(a9a_head)
    names = [a["name"] for a in json.loads(ds.schema)["attributes"]]
    frame = pd.DataFrame([x for x, _ in ds.rows], columns=names).fillna(0.0)
    ys = [y for _, y in ds.rows]
    batched = flowboost.AdaBoostOL(learners=5, seed=3, schema=ds.schema)
    got = []
    for lo in range(0, len(ys), 700):
        got += list(batched.predict_learn_many(frame.iloc[lo:lo + 700], ys[lo:lo + 700]))
    single = flowboost.AdaBoostOL(learners=5, seed=3, schema=ds.schema)
    want = [single.predict_learn_one(x, y) for x, y in ds.rows]
    assert got == want
    assert batched.to_bytes() == single.to_bytes()
    with pytest.raises(ValueError, match="labels for"):
        batched.predict_learn_many(frame.iloc[:3], ys[:2])
