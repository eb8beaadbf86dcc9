"""River's own estimator checks (river.checks, River pinned in pyproject.toml's `test`
extra) on every estimator. A check that cannot apply is skipped by name, with the
reason (see SKIPS)."""

import pytest

river = pytest.importorskip("river")
pytest.importorskip("sklearn")
from river import checks  # noqa: E402

import flowboost  # noqa: E402

ESTIMATORS = [
    flowboost.OnlineBBM,
    flowboost.AdaBoostOL,
    flowboost.OnlineMBBM,
    flowboost.AdaBoostOLM,
    flowboost.OzaBoost,
    flowboost.OnlineBMR,
    flowboost.AdaOLMR,
    flowboost.FALT,
    flowboost.SALT,
    flowboost.FALTKernel,
]

#: Checks that cannot apply, by name, with the reason.
RANDOM_PREDICTIONS = (
    "a prediction draws from the model's random streams (Hedge's choice of expert, the "
    "weak learners' random tie-breaks), as the command line's predictions do: predicting "
    "the same x twice (once in a batch, once alone) may differ"
)
SKIPS: dict = {
    ("*", "check_predict_many_matches_predict_one"): RANDOM_PREDICTIONS,
    ("*", "check_predict_proba_many_matches_predict_proba_one"): RANDOM_PREDICTIONS,
}


def _music_available() -> bool:
    """River's multi-label dataset (Music) is downloaded on first use."""
    try:
        from river import datasets

        next(iter(datasets.Music().take(1)))
        return True
    except Exception:
        return False


MUSIC = None


def _cases():
    for cls in ESTIMATORS:
        for params in cls._unit_test_params():
            model = cls(**params)
            for check in checks.yield_checks(model):
                name = check.__name__
                dataset = getattr(check, "keywords", {}).get("dataset")
                label = f"{cls.__name__}-{name}"
                if dataset is not None:
                    label += f"-{type(dataset).__name__}"
                yield pytest.param(model, check, id=label)


@pytest.mark.parametrize("model, check", list(_cases()))
def test_river_check(model, check):
    global MUSIC
    name = check.__name__
    dataset = getattr(check, "keywords", {}).get("dataset")
    if dataset is not None and isinstance(model, river.base.MultiLabelClassifier):
        if MUSIC is None:
            MUSIC = _music_available()
        if not MUSIC:
            pytest.skip(
                f"{name}: River's multi-label dataset (Music) must be downloaded and the "
                "network is not reachable"
            )
    reason = SKIPS.get((type(model).__name__, name)) or SKIPS.get(("*", name))
    if reason:
        pytest.skip(f"{name}: {reason}")
    check(model.clone())
