"""The packed call record the extension hands over (src/pybind/call_queue.h, CallRecord)."""

RECORD_FIELDS = [
    ("ts_ns", "<u8"),
    ("dur_ns", "<u8"),
    ("pid", "<u4"),
    ("tid", "<u4"),
    ("probe", "<u4"),
    ("nargs", "u1"),
    ("nested", "?"),
    ("has_exit", "?"),
    ("fault_mask", "u1"),
    ("ret", "<i8"),
    ("args", "<u8", (8,)),
    ("comm", "S16"),
]

RECORD_SIZE = 120


def record_dtype():
    """The NumPy dtype of one call (imports NumPy on first use)."""
    import numpy as np

    dtype = np.dtype(RECORD_FIELDS)
    assert dtype.itemsize == RECORD_SIZE
    return dtype
