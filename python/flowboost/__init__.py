"""flowboost: online boosting with River's interface, on flowboost's Rust core.

The estimators (``AdaBoostOL``, ``OnlineBBM``, ``AdaBoostOLM``, ``OnlineMBBM``,
``OzaBoost``, ``OnlineBMR``, ``AdaOLMR``, ``FALT``, ``SALT``, ``FALTKernel``,
``TopkBBM``, ``TopkAdaptive``) learn one example at a time (``learn_one``,
``predict_one``, ``predict_proba_one``) or in batches (``learn_many``,
``predict_many``), and read and write the command line's model files (``save``,
``flowboost.load``). See docs/python.md.
"""

from ._estimators import (
    DEFAULT_MAX_CLASSES,
    DEFAULT_MAX_FEATURES,
    FALT,
    SALT,
    AdaBoostOL,
    AdaBoostOLM,
    AdaOLMR,
    Dataset,
    FALTKernel,
    OnlineBBM,
    OnlineBMR,
    OnlineMBBM,
    OzaBoost,
    TopkAdaptive,
    TopkBBM,
    from_bytes,
    load,
    read_dataset,
)
from ._flowboost import ModelFileError

__all__ = [
    "AdaBoostOL",
    "AdaBoostOLM",
    "AdaOLMR",
    "DEFAULT_MAX_CLASSES",
    "DEFAULT_MAX_FEATURES",
    "Dataset",
    "FALT",
    "FALTKernel",
    "ModelFileError",
    "OnlineBBM",
    "OnlineBMR",
    "OnlineMBBM",
    "OzaBoost",
    "SALT",
    "TopkAdaptive",
    "TopkBBM",
    "from_bytes",
    "load",
    "read_dataset",
]
__version__ = "0.1.0"
