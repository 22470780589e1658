"""Test-wide settings: keep libraries quiet and offline."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# Property tests explore a fixed pseudo-random sample so CI is repeatable; set
# HYPOTHESIS_PROFILE=explore locally to search new examples on every run.
from hypothesis import settings  # noqa: E402

# No deadline: how long an example takes is a figure for benchmarks, and on a loaded
# machine a per-example time limit fails correct code.
settings.register_profile("repeatable", derandomize=True, print_blob=True, deadline=None)
settings.register_profile("explore", derandomize=False, print_blob=True, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))
