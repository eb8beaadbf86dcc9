import os
import pathlib
import shutil

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = pathlib.Path(os.environ.get("FLOWBOOST_DATA", ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def flowboost_bin():
    """The command line: $FLOWBOOST_BIN, else the workspace's build (profile ci or release)."""
    candidates = [os.environ.get("FLOWBOOST_BIN")]
    candidates += [str(ROOT / "target" / p / "flowboost") for p in ("ci", "release", "debug")]
    candidates.append(shutil.which("flowboost"))
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    pytest.skip("no flowboost binary (build it: cargo build --profile ci, or set FLOWBOOST_BIN)")


@pytest.fixture(scope="session")
def data_dir():
    if not DATA.is_dir():
        pytest.skip(f"no dataset folder at {DATA} (set FLOWBOOST_DATA)")
    return DATA


@pytest.fixture(scope="session")
def a9a_head(data_dir, tmp_path_factory):
    """The first 4000 examples of a9a (LIBSVM), to keep the suite short."""
    path = tmp_path_factory.mktemp("data") / "a9a-4000"
    with open(data_dir / "a9a" / "a9a") as src, open(path, "w") as out:
        for i, line in enumerate(src):
            if i == 4000:
                break
            out.write(line)
    return path
