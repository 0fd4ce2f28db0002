"""The Toxiproxy server the outage tests look for is the one `make toxiproxy` builds."""

from __future__ import annotations

import os
import re

from tests.conftest import ROOT
from tests.support import toxiproxy


def test_the_tests_look_for_toxiproxy_where_make_builds_it():
    makefile = (ROOT / "Makefile").read_text()
    version = re.search(r"^TOXIPROXY_VERSION := (\S+)$", makefile, re.M)
    built = re.search(r"^TOXIPROXY := \$\(CACHE\)/(\S+)$", makefile, re.M)
    assert version and built and re.search(r"^setup: .*\btoxiproxy\b", makefile, re.M)
    assert version.group(1) == toxiproxy.VERSION
    path = built.group(1).replace("$(TOXIPROXY_VERSION)", version.group(1))
    assert toxiproxy.ROOT / ".cache" / path == toxiproxy.BINARY or "SQLQUEUE_TOXIPROXY" in os.environ
