"""River-compatible estimators over flowboost's Rust core (``flowboost._flowboost.Core``).

Every estimator wraps one Rust ``Model``: the same stages, the same random streams and
the same model files as the ``flowboost`` command line. Keyword arguments are the
command line's model options (``--tree-params`` is ``tree_params``); ``None`` means the
command line's default.
"""

from __future__ import annotations

import json
import math
import typing

from . import _flowboost
from ._flowboost import Core, ModelFileError

try:  # River is optional: with it, the estimators are River estimators.
    from river import base as _river_base

    _Classifier = _river_base.MiniBatchClassifier
    _MultiLabel = _river_base.MultiLabelClassifier
except ImportError:  # pragma: no cover - exercised without river only

    class _Base:
        def clone(self, new_params=None):
            params = {**self._get_params(), **(new_params or {})}
            return self.__class__(**params)

        def _get_params(self):
            import inspect

            return {n: getattr(self, n) for n in inspect.signature(self.__init__).parameters}

        def __repr__(self):
            args = ", ".join(f"{k}={v!r}" for k, v in self._get_params().items())
            return f"{type(self).__name__}({args})"

    _Classifier = _Base
    _MultiLabel = _Base

__all__ = [
    "OnlineBBM",
    "AdaBoostOL",
    "OnlineMBBM",
    "AdaBoostOLM",
    "OzaBoost",
    "OnlineBMR",
    "AdaOLMR",
    "FALT",
    "SALT",
    "FALTKernel",
    "TopkBBM",
    "TopkAdaptive",
    "load",
    "read_dataset",
    "Dataset",
]

_ENSEMBLE = (
    "learners",
    "weak",
    "tree_params",
    "feature_subset",
    "max_leaves",
    "max_depth",
    "max_model_bytes",
)
_FALT = ("eta", "repetitions", "kernel", "kernel_width", "budget", "online_scaling", "grid")

#: The room for features a model is built with unless told (``max_features``).
DEFAULT_MAX_FEATURES = 256
#: The room for classes or labels a model is built with unless told (``max_classes``).
DEFAULT_MAX_CLASSES = 16


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


class _Flowboost:
    """What every estimator shares: the core, its labels, pickling, save and load."""

    _ALGORITHM: str = ""
    _TASK: str = ""
    _OPTIONS: tuple = ()

    # -- construction -------------------------------------------------------------------

    def _setup(self):
        options = {name: getattr(self, name) for name in self._OPTIONS}
        if self.schema is not None:
            schema = json.loads(self.schema) if isinstance(self.schema, str) else dict(self.schema)
            if schema.get("task") != self._TASK:
                raise ValueError(
                    f"schema: a {schema.get('task')} schema, but {type(self).__name__} is {self._TASK}"
                )
        else:
            schema = self._fresh_schema()
        self._core = Core.create(self._ALGORITHM, json.dumps(schema), int(self.seed), options)
        self._read_labels()

    def _fresh_schema(self) -> dict:
        n = int(self.max_features)
        if n < 1:
            raise ValueError(f"max_features: {n} is not a positive integer")
        attributes = [
            {"name": _flowboost.free_column_name(j), "kind": "Numeric"} for j in range(n)
        ]
        if self._TASK == "binary":
            labels = ["False", "True"]
        else:
            classes = list(self.classes or [])
            k = max(int(self.max_classes or 0), len(classes))
            if k < 2:
                raise ValueError("max_classes: a model needs room for at least 2 classes")
            labels = [str(c) for c in classes] + [
                _flowboost.free_column_name(j) for j in range(len(classes), k)
            ]
        return {"attributes": attributes, "labels": labels, "task": self._TASK}

    def _read_labels(self):
        """The label objects by index, from the core's schema (free slots left out)."""
        names = json.loads(self._core.schema_json())["labels"]
        given = list(getattr(self, "classes", None) or [])
        self._classes = []
        for i, name in enumerate(names):
            if name.startswith("(free "):
                break
            self._classes.append(given[i] if i < len(given) and str(given[i]) == name else name)
        self._class_index = {c: i for i, c in enumerate(self._classes)}
        self._room = len(names)

    # -- labels ---------------------------------------------------------------------------

    def _index(self, y, learn: bool) -> int:
        """The index of class `y`, a new class taking the next free slot when learning."""
        if self._TASK == "binary":
            return self._binary_index(y)
        try:
            i = self._class_index.get(y)
        except TypeError:
            raise TypeError(f"y: {y!r} is not hashable") from None
        if i is None and not isinstance(y, str):
            i = self._class_index.get(str(y))
        if i is not None:
            return i
        if not learn:
            return -1
        if len(self._classes) >= self._room:
            raise ValueError(
                f"y: {y!r} would be class {len(self._classes) + 1}, and the model has room for "
                f"{self._room} (raise max_classes, or give classes=)"
            )
        i = len(self._classes)
        self._core.name_label(i, str(y))
        self._classes.append(y)
        self._class_index[y] = i
        return i

    def _binary_index(self, y) -> int:
        if isinstance(y, str):
            if y in self._class_index:
                return self._class_index[y]
            raise ValueError(f"y: {y!r} is not one of the labels {self._classes}")
        if isinstance(y, float) and not math.isfinite(y):
            raise ValueError(f"y: {y!r} is not a label")
        try:
            b = bool(y)
        except Exception:
            raise TypeError(f"y: expected a bool, got {type(y).__name__}") from None
        if b != y and not isinstance(y, bool):
            raise ValueError(f"y: {y!r} is not a binary label (True/False, 1/0)")
        return int(b)

    def _label_of(self, i: int):
        if self._TASK == "binary":
            return bool(i)
        return self._classes[i]

    # -- delayed feedback --------------------------------------------------------------

    def learn_feedback(self, id, y) -> str:
        """Learns from the label of the event predicted with ``predict_one(x, id=id)``.

        Returns what became of it: ``"joined"`` (learned now), ``"held"`` (its event has
        not been predicted yet: it waits), ``"late"`` (its event expired) or
        ``"repeated"`` (its event already had its feedback).
        """
        return self._core.learn_feedback(id, self._label_value(y))

    @property
    def pending(self) -> int:
        """The number of events waiting for their feedback."""
        return self._core.pending()

    # -- files and pickling --------------------------------------------------------------

    def save(self, path) -> None:
        """Writes the model file ``path`` (atomically), as ``flowboost eval --save-model``
        writes one: ``flowboost predict --model``, ``serve``, ``inspect`` and the Kafka
        job read it."""
        self._core.save(str(path))

    def to_bytes(self) -> bytes:
        """The model file's bytes."""
        return self._core.to_bytes()

    def __getstate__(self):
        state = {k: v for k, v in self.__dict__.items() if not k.startswith("_")}
        state["_model"] = self._core.to_bytes()
        state["_classes"] = list(self._classes)
        return state

    def __setstate__(self, state):
        state = dict(state)
        model = state.pop("_model")
        classes = state.pop("_classes")
        self.__dict__.update(state)
        self._core = Core.from_bytes(model)
        self._read_labels()
        self._classes = list(classes)
        self._class_index = {c: i for i, c in enumerate(self._classes)}

    @property
    def feature_names(self) -> list:
        """The names of the features the model has columns for, in column order."""
        return self._core.feature_names()

    # -- batches ---------------------------------------------------------------------------

    @staticmethod
    def _numeric_block(X):
        """(names, bytes, rows) of a numeric DataFrame or 2-D array, else None."""
        try:
            import numpy as np
        except ImportError:  # pragma: no cover
            return None
        if hasattr(X, "columns") and hasattr(X, "dtypes"):
            if not all(np.issubdtype(t, np.number) or np.issubdtype(t, np.bool_) for t in X.dtypes):
                return None
            names = [str(c) for c in X.columns]
            block = X.to_numpy(dtype=np.float64)
        else:
            block = np.asarray(X)
            if block.ndim != 2 or not (
                np.issubdtype(block.dtype, np.number) or np.issubdtype(block.dtype, np.bool_)
            ):
                return None
            names = [str(j) for j in range(block.shape[1])]
            block = block.astype(np.float64, copy=False)
        block = np.ascontiguousarray(block, dtype="<f8")
        return names, block.tobytes(), block.shape[0]

    @staticmethod
    def _rows(X):
        if hasattr(X, "to_dict"):
            return X.to_dict(orient="records")
        return [dict(enumerate(row)) for row in X]

    def _predict_block(self, X):
        block = self._numeric_block(X)
        if block is not None:
            return self._core.predict_rows(*block)
        return [self._core.predict(x) for x in self._rows(X)]

    def _learn_block(self, X, y):
        labels = [self._index(v, True) for v in y]
        block = self._numeric_block(X)
        if block is not None:
            names, data, rows = block
            self._core.learn_rows(names, data, rows, labels)
        else:
            rows = self._rows(X)
            if len(rows) != len(labels):
                raise ValueError(f"y: {len(labels)} labels for {len(rows)} rows")
            for x, label in zip(rows, labels):
                self._core.learn(x, label)

    def _predict_learn_block(self, X, y):
        labels = [self._index(v, True) for v in y]
        block = self._numeric_block(X)
        if block is not None:
            names, data, rows = block
            return self._core.predict_learn_rows(names, data, rows, labels)
        rows = self._rows(X)
        if len(rows) != len(labels):
            raise ValueError(f"y: {len(labels)} labels for {len(rows)} rows")
        return [self._core.predict_learn(x, label) for x, label in zip(rows, labels)]

    @staticmethod
    def _series(values, X, name=None):
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover
            return values
        index = X.index if hasattr(X, "index") else None
        return pd.Series(values, index=index, name=name)


class _SingleLabel(_Flowboost, _Classifier):
    """Binary and multiclass classifiers."""

    @property
    def _multiclass(self):
        return self._TASK != "binary"

    def _label_value(self, y):
        return self._index(y, True)

    def _proba(self, scores) -> dict:
        if self._TASK == "binary":
            if len(scores) == 1:
                p = _sigmoid(scores[0])
            else:
                p = _sigmoid(scores[1] - scores[0])
            return {False: 1.0 - p, True: p}
        seen = len(self._classes)
        if seen == 0:
            return {}
        top = max(scores[:seen])
        weights = [math.exp(s - top) for s in scores[:seen]]
        total = sum(weights)
        return {c: w / total for c, w in zip(self._classes, weights)}

    def _class(self, p):
        cls, _, scores, _, _ = p
        if self._TASK == "binary":
            return bool(cls)
        if cls < len(self._classes):
            return self._classes[cls]
        if not self._classes:
            return None
        seen = scores[: len(self._classes)]
        return self._classes[max(range(len(seen)), key=seen.__getitem__)]

    def learn_one(self, x: dict, y) -> None:
        """Learns from one example: ``x`` a dict of features (numbers, bools or strings;
        ``None`` for a missing value), ``y`` its class."""
        self._core.learn(x, self._index(y, True))

    def predict_one(self, x: dict, id=None):
        """The predicted class of ``x`` (``None`` before any class is seen). With ``id``
        (an int or a string), the event waits for its label: ``learn_feedback(id, y)``."""
        if id is not None:
            return self._class(self._core.predict_pending(x, id))
        return self._class(self._core.predict(x))

    def predict_learn_one(self, x: dict, y):
        """Predicts ``x``, then learns from ``y``, in one pass (test-then-train): the
        prediction ``flowboost eval --protocol prequential`` makes, bit for bit (as
        ``predict_one`` then ``learn_one`` does, in two passes)."""
        return self._class(self._core.predict_learn(x, self._index(y, True)))

    def predict_proba_one(self, x: dict) -> dict:
        """Class probabilities: the logistic (binary) or the softmax (multiclass) of the
        chosen expert's scores, over the classes seen. Not calibrated."""
        return self._proba(self._core.predict(x)[2])

    def learn_many(self, X, y) -> None:
        """Learns from a batch: ``X`` a pandas DataFrame or a 2-D NumPy array (numeric
        columns are read in one block, the GIL released while learning; NaN is a missing
        value), ``y`` the classes."""
        self._learn_block(X, list(y))

    def predict_many(self, X):
        """The predicted classes of a batch (a pandas Series for a DataFrame)."""
        return self._series([self._class(p) for p in self._predict_block(X)], X)

    def predict_learn_many(self, X, y):
        """Predicts each row of a batch, then learns from its class, in one pass (the
        batch form of ``predict_learn_one``: ``flowboost eval``'s prequential predictions,
        bit for bit); the predicted classes (a pandas Series for a DataFrame).
        ``predict_many`` then ``learn_many`` on the same rows predicts twice."""
        return self._series([self._class(p) for p in self._predict_learn_block(X, list(y))], X)

    def predict_proba_many(self, X):
        """The class probabilities of a batch, as a pandas DataFrame."""
        import pandas as pd

        rows = [self._proba(p[2]) for p in self._predict_block(X)]
        index = X.index if hasattr(X, "index") else None
        return pd.DataFrame(rows, index=index)


class _MultiLabelBase(_Flowboost, _MultiLabel):
    """Multi-label classifiers: ``y`` as River's ``{label: bool}``."""

    def _label_value(self, y):
        if not isinstance(y, dict):
            raise TypeError(f"y: expected a dict of {{label: bool}}, got {type(y).__name__}")
        relevant = []
        for label, on in y.items():
            i = self._index(label, True)
            if on:
                relevant.append(i)
        return relevant

    def learn_one(self, x: dict, y: dict) -> None:
        """Learns from one example: ``y`` is ``{label: bool}`` (labels seen for the first
        time take the next free label slot)."""
        self._core.learn(x, self._label_value(y))

    def predict_one(self, x: dict, id=None) -> dict:
        """``{label: bool}`` over the labels seen: the predicted label set. With ``id``,
        the event waits for its labels: ``learn_feedback(id, y)``."""
        p = self._core.predict_pending(x, id) if id is not None else self._core.predict(x)
        chosen = set(p[1])
        return {c: i in chosen for i, c in enumerate(self._classes)}

    def predict_proba_one(self, x: dict) -> dict:
        """``{label: {False: 1 - p, True: p}}`` with ``p`` the logistic of the label's
        score (not calibrated)."""
        scores = self._core.predict(x)[2]
        out = {}
        for i, c in enumerate(self._classes):
            p = _sigmoid(scores[i]) if i < len(scores) else 0.5
            out[c] = {False: 1.0 - p, True: p}
        return out

    def predict_ranking_one(self, x: dict) -> list:
        """The labels seen, highest score first."""
        scores = self._core.predict(x)[2]
        order = sorted(range(len(self._classes)), key=lambda i: -scores[i])
        return [self._classes[i] for i in order]


class _TopK(_MultiLabelBase):
    """Top-k boosters: learn from the clicks on the ``k`` labels shown."""

    def rank_one(self, x: dict, id=None) -> list:
        """The ``k`` labels to show for ``x``, in display order (the booster's ranking,
        randomized with probability ``rho``). With ``id``, the event waits for its
        clicks: ``learn_clicks(id, clicked)``."""
        p = self._core.predict_pending(x, id) if id is not None else self._core.predict(x)
        return [self._classes[i] if i < len(self._classes) else None for i in p[4]]

    def learn_clicks(self, id, clicked) -> str:
        """Learns from the labels clicked among those ``rank_one(x, id=id)`` showed."""
        return self._core.learn_clicks(id, [self._index(c, True) for c in clicked])

    def learn_clicks_one(self, x: dict, shown, clicked, propensities) -> str:
        """Learns from a logged impression: the labels ``shown`` by some logging policy,
        those ``clicked``, and each clicked label's propensity (the logging policy's
        probability of showing it where it was clicked)."""
        for s in shown:
            self._index(s, True)
        clicked = list(clicked)
        propensities = [float(p) for p in propensities]
        if len(propensities) != len(clicked):
            raise ValueError(
                f"propensities: {len(propensities)} for {len(clicked)} clicked labels"
            )
        self._events = getattr(self, "_events", 0) + 1
        id = f"flowboost-logged-{self._events}"
        self._core.predict_pending(x, id)
        pairs = [(self._index(c, True), p) for c, p in zip(clicked, propensities)]
        return self._core.learn_logged(id, pairs)


def _make_init(params):
    """An ``__init__`` with an explicit signature (River reads the parameters from it)."""
    args = ", ".join(f"{n}={d!r}" for n, d in params)
    lines = [f"    self.{n} = {n}" for n, _ in params]
    src = f"def __init__(self, *, {args}):\n" + "\n".join(lines) + "\n    self._setup()\n"
    namespace: dict = {}
    exec(src, namespace)  # noqa: S102 - a fixed template over the names below
    return namespace["__init__"]


def _estimator(name, base, algorithm, task, options, doc, tests=None):
    params = [(o, None) for o in options] + [("seed", 1)]
    if task == "binary":
        params += [("max_features", DEFAULT_MAX_FEATURES), ("schema", None)]
    else:
        params += [
            ("classes", None),
            ("max_classes", DEFAULT_MAX_CLASSES),
            ("max_features", DEFAULT_MAX_FEATURES),
            ("schema", None),
        ]
    cls = type(
        name,
        (base,),
        {
            "__init__": _make_init(params),
            "__doc__": doc,
            "__module__": "flowboost",
            "_ALGORITHM": algorithm,
            "_TASK": task,
            "_OPTIONS": tuple(options),
        },
    )
    if tests is not None:
        cls._unit_test_params = classmethod(lambda c: iter([tests]))
    return cls


_COMMON_DOC = """
    Parameters
    ----------
    learners, weak, tree_params, feature_subset, max_leaves, max_depth, max_model_bytes, ...
        The command line's model options of the same names (``flowboost run --help``;
        ``tree_params`` is ``--tree-params``); ``None``: its default.
    seed
        The seed of every random stream (the command line's ``--seed``, default 1).
    max_features
        Room for features: names take columns as they first appear in a learned example,
        up to this many (then ``ValueError``). A string value ``v`` of feature ``f`` is
        the one-hot column ``f=v``.
    schema
        A schema (JSON, as ``read_dataset`` returns it) fixing the columns, their kinds
        (nominal values) and the labels: what the command line reads from the same file.
"""

_CLASSES_DOC = """    classes
        The classes (labels) in index order; more take the free slots as they appear.
    max_classes
        Room for classes (labels): at least ``len(classes)``.
"""


def _doc(title, body, example, classes=False):
    return f"""{title}

    {body}
{_COMMON_DOC}{_CLASSES_DOC if classes else ""}
    Examples
    --------
{example}
"""


_BINARY_EXAMPLE = """    >>> import flowboost
    >>> model = flowboost.{name}(learners=5, seed=1)
    >>> for i in range(400):
    ...     x = {{"a": i % 10, "b": (i * 7) % 3}}
    ...     model.learn_one(x, x["a"] >= 5)
    >>> model.predict_one({{"a": 8, "b": 1}})
    True
    >>> model.predict_one({{"a": 1, "b": 1}})
    False
"""

_MULTICLASS_EXAMPLE = """    >>> import flowboost
    >>> model = flowboost.{name}(learners=5, seed=1)
    >>> for i in range(600):
    ...     x = {{"a": i % 9}}
    ...     model.learn_one(x, ["low", "mid", "high"][x["a"] // 3])
    >>> model.predict_one({{"a": 7}})
    'high'
    >>> sorted(model.predict_proba_one({{"a": 7}}))
    ['high', 'low', 'mid']
"""

_MULTILABEL_EXAMPLE = """    >>> import flowboost
    >>> model = flowboost.{name}({args}seed=1)
    >>> for i in range(600):
    ...     x = {{"a": i % 4}}
    ...     model.learn_one(x, {{"red": x["a"] >= 2, "blue": x["a"] % 2 == 1, "green": x["a"] == 0}})
    >>> sorted(model.predict_ranking_one({{"a": 3}}))
    ['blue', 'green', 'red']
"""

_TOPK_EXAMPLE = """    >>> import flowboost
    >>> model = flowboost.{name}(learners=5, k=2, seed=1, classes=["a", "b", "c", "d"])
    >>> for i in range(300):
    ...     shown = model.rank_one({{"x": i % 4}}, id=i)
    ...     outcome = model.learn_clicks(i, [s for s in shown if s == "abcd"[i % 4]])
    >>> len(model.rank_one({{"x": 1}}))
    2
"""

OnlineBBM = _estimator(
    "OnlineBBM",
    _SingleLabel,
    "online-bbm",
    "binary",
    _ENSEMBLE + ("gamma",),
    _doc(
        "Online boost-by-majority (Beygelzimer, Kale and Luo 2015): the optimal booster "
        "for weak learners of edge ``gamma``.",
        "Binary: ``y`` is a bool (or 0/1); ``predict_one`` gives a bool.",
        _BINARY_EXAMPLE.format(name="OnlineBBM"),
    ),
    {"learners": 3},
)
AdaBoostOL = _estimator(
    "AdaBoostOL",
    _SingleLabel,
    "adaboost-ol",
    "binary",
    _ENSEMBLE,
    _doc(
        "AdaBoost.OL (Beygelzimer, Kale and Luo 2015): the adaptive, parameter-free online booster.",
        "Binary: ``y`` is a bool (or 0/1); ``predict_one`` gives a bool.",
        _BINARY_EXAMPLE.format(name="AdaBoostOL"),
    ),
    {"learners": 3},
)
OnlineMBBM = _estimator(
    "OnlineMBBM",
    _SingleLabel,
    "online-mbbm",
    "multiclass",
    _ENSEMBLE + ("gamma",),
    _doc(
        "OnlineMBBM (Jung, Goetz and Tewari 2017): the optimal multiclass booster (0-1 loss potentials).",
        "Multiclass: ``y`` any hashable class; classes take label slots as they appear.",
        _MULTICLASS_EXAMPLE.format(name="OnlineMBBM"),
        classes=True,
    ),
    {"learners": 3},
)
AdaBoostOLM = _estimator(
    "AdaBoostOLM",
    _SingleLabel,
    "adaboost-olm",
    "multiclass",
    _ENSEMBLE,
    _doc(
        "AdaBoost.OLM (Jung, Goetz and Tewari 2017): the adaptive multiclass booster.",
        "Multiclass: ``y`` any hashable class; classes take label slots as they appear.",
        _MULTICLASS_EXAMPLE.format(name="AdaBoostOLM"),
        classes=True,
    ),
    {"learners": 3},
)
OzaBoost = _estimator(
    "OzaBoost",
    _SingleLabel,
    "oza",
    "multiclass",
    _ENSEMBLE + ("oza_votes",),
    _doc(
        "Online boosting of Oza and Russell (2001), the baseline of the papers.",
        "Multiclass (two classes too): ``y`` any hashable class.",
        _MULTICLASS_EXAMPLE.format(name="OzaBoost"),
        classes=True,
    ),
    {"learners": 3},
)
OnlineBMR = _estimator(
    "OnlineBMR",
    _MultiLabelBase,
    "online-bmr",
    "multilabel",
    _ENSEMBLE + ("gamma", "potential", "label_set", "threshold_eta", "threshold_repetitions"),
    _doc(
        "OnlineBMR (Jung and Tewari 2018): the optimal booster for multi-label ranking.",
        "Multi-label: ``y`` is ``{label: bool}``; ``predict_ranking_one`` ranks the labels.",
        _MULTILABEL_EXAMPLE.format(name="OnlineBMR", args="learners=5, "),
        classes=True,
    ),
    {"learners": 3},
)
AdaOLMR = _estimator(
    "AdaOLMR",
    _MultiLabelBase,
    "ada-olmr",
    "multilabel",
    _ENSEMBLE + ("label_set", "threshold_eta", "threshold_repetitions"),
    _doc(
        "Ada.OLMR (Jung and Tewari 2018): the adaptive booster for multi-label ranking.",
        "Multi-label: ``y`` is ``{label: bool}``; ``predict_ranking_one`` ranks the labels.",
        _MULTILABEL_EXAMPLE.format(name="AdaOLMR", args="learners=5, "),
        classes=True,
    ),
    {"learners": 3},
)
FALT = _estimator(
    "FALT",
    _MultiLabelBase,
    "falt",
    "multilabel",
    _FALT,
    _doc(
        "FALT: an online multi-label classifier with a learned (adaptive) label threshold.",
        "Multi-label: ``y`` is ``{label: bool}``; the threshold is learned online.",
        _MULTILABEL_EXAMPLE.format(name="FALT", args=""),
        classes=True,
    ),
    {},
)
SALT = _estimator(
    "SALT",
    _MultiLabelBase,
    "salt",
    "multilabel",
    ("eta", "delta", "repetitions", "online_scaling", "grid"),
    _doc(
        "SALT: FALT with second-order (AdaGrad-like) steps.",
        "Multi-label: ``y`` is ``{label: bool}``; the threshold is learned online.",
        _MULTILABEL_EXAMPLE.format(name="SALT", args=""),
        classes=True,
    ),
    {},
)
FALTKernel = _estimator(
    "FALTKernel",
    _MultiLabelBase,
    "falt-kernel",
    "multilabel",
    _FALT,
    _doc(
        "FALT with the RBF kernel.",
        "Multi-label: ``y`` is ``{label: bool}``; the threshold is learned online.",
        _MULTILABEL_EXAMPLE.format(name="FALTKernel", args="budget=200, "),
        classes=True,
    ),
    {"budget": 50},
)
TopkBBM = _estimator(
    "TopkBBM",
    _TopK,
    "topk-bbm",
    "multilabel",
    _ENSEMBLE + ("gamma", "k", "rho", "randomization", "clip_probability", "label_set"),
    _doc(
        "Top-k BBM (Jung and Tewari 2019): the optimal booster from top-k feedback.",
        "``rank_one(x, id=...)`` shows ``k`` labels; ``learn_clicks(id, clicked)`` learns.",
        _TOPK_EXAMPLE.format(name="TopkBBM"),
        classes=True,
    ),
    {"learners": 3, "k": 2},
)
TopkAdaptive = _estimator(
    "TopkAdaptive",
    _TopK,
    "topk-adaptive",
    "multilabel",
    _ENSEMBLE + ("k", "rho", "randomization", "clip_probability", "clip_gradient", "label_set"),
    _doc(
        "Top-k adaptive boosting (Jung and Tewari 2019): the adaptive booster from top-k feedback.",
        "``rank_one(x, id=...)`` shows ``k`` labels; ``learn_clicks(id, clicked)`` learns.",
        _TOPK_EXAMPLE.format(name="TopkAdaptive"),
        classes=True,
    ),
    {"learners": 3, "k": 2},
)

_BY_ALGORITHM = {
    c._ALGORITHM: c
    for c in (
        OnlineBBM,
        AdaBoostOL,
        OnlineMBBM,
        AdaBoostOLM,
        OzaBoost,
        OnlineBMR,
        AdaOLMR,
        FALT,
        SALT,
        FALTKernel,
        TopkBBM,
        TopkAdaptive,
    )
}


def _parse_option(text: str):
    if text == "none":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _from_core(core) -> _Flowboost:
    algorithm = core.algorithm()
    cls = _BY_ALGORITHM.get(algorithm)
    schema = json.loads(core.schema_json())
    if cls is None:
        raise ValueError(f"{algorithm}: no Python estimator for this algorithm")
    if cls._TASK != schema["task"]:
        raise ValueError(f"{algorithm} on a {schema['task']} stream: no Python estimator for it")
    model = cls.__new__(cls)
    options = dict(core.options())
    for name in cls._OPTIONS:
        value = _parse_option(options.get(name, "none"))
        if name == "grid":
            value = value not in (None, "off")
        if name == "kernel_width" and value is not None and options.get("kernel") != "rbf":
            value = None
        model.__dict__[name] = value
    model.seed = core.seed()
    model.max_features = len(schema["attributes"])
    model.schema = core.schema_json()
    if cls._TASK != "binary":
        model.classes = None
        model.max_classes = len(schema["labels"])
    model._core = core
    model._read_labels()
    return model


def load(path) -> _Flowboost:
    """Reads a model file (written by ``save``, ``flowboost eval --save-model`` or the
    Kafka job) as the estimator of its algorithm.

    Raises ``flowboost.ModelFileError`` when the file is damaged or not a model file.
    """
    return _from_core(Core.load(str(path)))


def from_bytes(data: bytes) -> _Flowboost:
    """A model from the bytes of a model file (see ``load``)."""
    return _from_core(Core.from_bytes(bytes(data)))


class Dataset(typing.NamedTuple):
    """A dataset file as the command line reads it."""

    #: The schema (JSON): pass it as ``schema=`` to fix the columns and labels.
    schema: str
    #: ``(x, y)`` pairs: ``x`` a dict of features, ``y`` the label's name (binary and
    #: multiclass) or ``{label: bool}`` (multi-label).
    rows: list

    @property
    def labels(self) -> list:
        """The label names in index order."""
        return json.loads(self.schema)["labels"]

    @property
    def task(self) -> str:
        """binary, multiclass or multilabel."""
        return json.loads(self.schema)["task"]


def read_dataset(path, labels=None, xml=None) -> Dataset:
    """Reads a dataset file (ARFF, LIBSVM, CSV; gzip too) as ``flowboost eval --data``
    does: the same schema, the same examples in the same order. Binary labels come as
    bools (the positive class ``True``), multiclass ones as their names, multi-label ones
    as ``{label: bool}``."""
    schema, rows = _flowboost.read_dataset(str(path), labels, None if xml is None else str(xml))
    meta = json.loads(schema)
    names = meta["labels"]
    task = meta["task"]
    out = []
    for x, y in rows:
        if y is None:
            out.append((x, None))
        elif task == "binary":
            out.append((x, y == 1))
        elif task == "multiclass":
            out.append((x, names[y]))
        else:
            chosen = set(y)
            out.append((x, {n: i in chosen for i, n in enumerate(names)}))
    return Dataset(schema, out)
