"""Data sources: the paper's synthetic simulation and user CSV files."""

from core.data.csvfile import read_csv
from core.data.dataset import Dataset
from core.data.synthetic import synthetic

__all__ = ["Dataset", "read_csv", "synthetic"]
