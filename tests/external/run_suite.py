"""Runs the hook's unittest suite (tests/external/run.sh): every test_*.py, or the one named by
`--module NAME`, then prints every skip as `skipped: TEST: REASON`, the lines scripts/test-skips
collects."""

import os
import sys
import unittest


class Runner(unittest.TextTestRunner):
    def run(self, test):
        result = super().run(test)
        for case, reason in result.skipped:
            self.stream.writeln("skipped: %s: %s" % (case.id(), reason))
        return result


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    args, pattern = sys.argv[1:], "test_*.py"
    if args[:1] == ["--module"]:
        pattern, args = args[1] + ".py", args[2:]
    unittest.main(module=None, testRunner=Runner,
                  argv=[sys.argv[0], "discover", "-s", here, "-p", pattern] + args)
