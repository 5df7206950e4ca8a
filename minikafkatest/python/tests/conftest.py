# The plugin's own tests run from a checkout as well as after
# `pip install`: when the package is not installed, load it from src/.
import importlib.metadata
import os
import sys

try:
    importlib.metadata.distribution("pytest-minikafka")
    pytest_plugins = ["pytester"]
except importlib.metadata.PackageNotFoundError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
    pytest_plugins = ["pytester", "pytest_minikafka.plugin"]
