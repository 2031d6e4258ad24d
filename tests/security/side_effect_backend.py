"""A backend module whose import leaves a mark: the file named by $CRICKET_TEST_IMPORT_MARK."""
import os
from pathlib import Path

from plugin_backend import HostMemoryBackend

Path(os.environ["CRICKET_TEST_IMPORT_MARK"]).write_text("imported\n")


class Backend(HostMemoryBackend):
    type_name = "marked"
    description = "host memory; its import writes a file (a test plugin)"
