"""Shared fixtures. The real data lives in ../shared beside the repository root."""

from pathlib import Path

import pytest

SHARED_PATH = Path(__file__).resolve().parents[1].parent / "shared"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The bible-en-fr Moses data (phrase tables, moses.ini); skips the test when it is absent."""
    path = SHARED_PATH / "data" / "bible-en-fr"
    if not path.is_dir():
        pytest.skip(f"real data not found at {path} (needs ../shared beside the repository)")
    return path
