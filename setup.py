"""Packaging shim: the import package `agones` lives in `src/` (so `src/informers` is `agones.informers`).

pyproject.toml cannot express "this folder is that package, with every sub-folder"; this does.
"""

from setuptools import find_packages, setup

setup(
    package_dir={"agones": "src"},
    packages=["agones", *(f"agones.{p}" for p in find_packages("src"))],
)
