"""The hook's overhead, printed for information; never asserted."""

import unittest

import overhead
from hooktest import needs_torch


@needs_torch
class OverheadInfo(unittest.TestCase):
    def test_print_overhead(self):
        print("\n" + overhead.report(overhead.measure(quick=True)))


if __name__ == "__main__":
    unittest.main()
