"""Reading and writing tables: CSV/TSV with sniffing, Parquet, atomic writes.

Examples
--------
>>> import tempfile, pathlib
>>> import veil.io
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "in.csv").write_text("a;b\\n1;x\\n2;y\\n")
>>> df = veil.io.read(d / "in.csv")
>>> _ = veil.io.write(df, d / "out.csv", like=d / "in.csv")
>>> (d / "out.csv").read_text()
'a;b\\n1;x\\n2;y\\n'
"""

from veil.io._folders import check_folder, folder_problem, output_folder
from veil.io._read import SourceFormat, read, read_table
from veil.io._write import atomic_write, json_text, same_file, write, write_json

__all__ = [
    "SourceFormat",
    "read",
    "read_table",
    "write",
    "atomic_write",
    "write_json",
    "json_text",
    "same_file",
    "check_folder",
    "folder_problem",
    "output_folder",
]
