"""The Python estimators against the command line: the same predictions on the same
file, options and seed (progressive validation), and model files read both ways."""

import json
import subprocess

import pytest

import flowboost

river = pytest.importorskip("river")
from river import evaluate, metrics  # noqa: E402


def cli(binary, *args):
    done = subprocess.run([binary, *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def cli_predictions(binary, path, tmp_path, *options):
    out = tmp_path / "predictions.jsonl"
    cli(binary, "eval", "--data", path, "--protocol", "prequential", "--predictions", out, *options)
    return [json.loads(line)["prediction"] for line in out.read_text().splitlines()]


CASES = [
    # (dataset, estimator, keyword arguments, command-line options)
    ("a9a", flowboost.AdaBoostOL, {"learners": 10}, ["--algo", "adaboost-ol", "--learners", "10"]),
    ("a9a", flowboost.OnlineBBM, {"learners": 5, "gamma": 0.1}, ["--algo", "online-bbm", "--learners", "5", "--gamma", "0.1"]),
    ("nursery", flowboost.AdaBoostOLM, {"learners": 10}, ["--algo", "adaboost-olm", "--learners", "10"]),
    ("nursery", flowboost.OnlineMBBM, {"learners": 5, "weak": "vfdt", "tree_params": "default"}, ["--algo", "online-mbbm", "--learners", "5", "--tree-params", "default"]),
]


@pytest.mark.parametrize("name, cls, params, options", CASES, ids=[f"{c[0]}-{c[1].__name__}" for c in CASES])
def test_progressive_validation_predicts_as_the_cli(name, cls, params, options, flowboost_bin, data_dir, a9a_head, tmp_path):
    path = a9a_head if name == "a9a" else data_dir / "nursery" / "nursery.csv"
    expected = cli_predictions(flowboost_bin, path, tmp_path, "--seed", "7", *options)
    ds = flowboost.read_dataset(path)
    labels = ds.labels
    model = cls(seed=7, schema=ds.schema, **params)
    got = []
    for x, y in ds.rows:
        p = model.predict_learn_one(x, y)
        got.append(int(p) if ds.task == "binary" else labels.index(p))
    assert got == expected
    # River's order, predict_one then learn_one: the same predictions (a pass that learns
    # nothing leaves the weak learners' generators as it found them).
    two = cls(seed=7, schema=ds.schema, **params)
    got = []
    for x, y in ds.rows:
        p = two.predict_one(x)
        two.learn_one(x, y)
        got.append(int(p) if ds.task == "binary" else labels.index(p))
    assert got == expected
    # River's own progressive validation gives the command line's accuracy.
    accuracy = evaluate.progressive_val_score(
        dataset=ds.rows, model=cls(seed=7, schema=ds.schema, **params), metric=metrics.Accuracy()
    )
    cli_accuracy = sum(
        p == (int(y) if ds.task == "binary" else labels.index(y)) for p, (_, y) in zip(expected, ds.rows)
    ) / len(expected)
    assert accuracy.get() == pytest.approx(cli_accuracy, abs=1e-12)


def predict_file(binary, model, path):
    out = cli(binary, "predict", "--model", model, "--data", path)
    return [json.loads(line)["prediction"] for line in out.splitlines()]


def test_a_python_model_is_read_by_the_cli(flowboost_bin, a9a_head, tmp_path):
    ds = flowboost.read_dataset(a9a_head)
    # Without a schema: the columns are named as the features appear.
    model = flowboost.AdaBoostOL(learners=5, seed=3, max_features=200)
    for x, y in ds.rows[:3000]:
        model.learn_one(x, y)
    path = tmp_path / "python.fbm"
    model.save(path)
    assert "adaboost-ol" in cli(flowboost_bin, "inspect", path)
    expected = predict_file(flowboost_bin, path, a9a_head)
    again = flowboost.load(path)
    assert [int(again.predict_one(x)) for x, _ in ds.rows] == expected


def test_a_cli_model_is_read_by_python(flowboost_bin, data_dir, tmp_path):
    path = data_dir / "nursery" / "nursery.csv"
    saved = tmp_path / "cli.fbm"
    cli(flowboost_bin, "eval", "--data", path, "--algo", "adaboost-olm", "--learners", "5", "--seed", "2", "--save-model", saved)
    expected = predict_file(flowboost_bin, saved, path)
    model = flowboost.load(saved)
    assert isinstance(model, flowboost.AdaBoostOLM)
    assert model.learners == 5 and model.seed == 2
    ds = flowboost.read_dataset(path)
    labels = ds.labels
    assert [labels.index(model.predict_one(x)) for x, _ in ds.rows] == expected
    # It goes on learning, and saves again.
    for x, y in ds.rows[:100]:
        model.learn_one(x, y)
    model.save(tmp_path / "again.fbm")
    assert flowboost.load(tmp_path / "again.fbm").predict_one(ds.rows[0][0]) in labels
