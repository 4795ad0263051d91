"""The pure parts of the build recipe: apt sources for bookworm with deb-src, the vendor
versions bumped, and the cache entry named by the inputs (no build, no network)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hack.realcluster import debian, inputs, vendor_fix

SYSTEM_DEB822 = """Types: deb
# a comment
URIs: http://mirror.test/debian
Suites: trixie trixie-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.test/debian-security
Suites: trixie-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://mirror.test/other
Suites: trixie
Components: main
"""


def test_deb822_sources_become_bookworm_with_deb_src() -> None:
    out = debian.deb822_with_sources(SYSTEM_DEB822, "trixie")
    stanzas = out.strip().split("\n\n")
    assert len(stanzas) == 2
    assert all("Types: deb deb-src" in s for s in stanzas)
    assert "Suites: bookworm bookworm-updates" in stanzas[0]
    assert "Suites: bookworm-security" in stanzas[1]
    assert "URIs: http://mirror.test/debian\n" in stanzas[0]
    assert "# a comment" not in out
    assert debian.deb822_with_sources(SYSTEM_DEB822.replace("trixie", "bookworm"),
                                      "bookworm") == out


def test_one_line_sources_get_deb_src_lines() -> None:
    out = debian.one_line_with_sources(
        "# x\ndeb [signed-by=/k.gpg] http://mirror.test/debian trixie main\n", "trixie")
    assert out.splitlines() == ["deb [signed-by=/k.gpg] http://mirror.test/debian bookworm main",
                                "deb-src [signed-by=/k.gpg] http://mirror.test/debian"
                                " bookworm main"]


def test_vendor_versions_bumped_in_go_mod_and_modules_txt() -> None:
    modules = ("# github.com/json-iterator/go v1.1.10 => github.com/json-iterator/go v1.1.10\n"
               "github.com/json-iterator/go\n"
               "# github.com/modern-go/reflect2 v1.0.1 => github.com/modern-go/reflect2 v1.0.1\n"
               "github.com/modern-go/reflect2\n")
    bumped = vendor_fix.bump_versions(modules)
    assert "v1.1.10" not in bumped and "v1.0.1" not in bumped
    assert bumped.count("github.com/json-iterator/go v1.1.12") == 2
    assert bumped.count("github.com/modern-go/reflect2 v1.0.2") == 2
    with pytest.raises(RuntimeError, match=r"reflect2 v1\.0\.1 not found"):
        vendor_fix.bump_versions(modules.replace("v1.0.1", "v1.0.0"))


def test_cache_entry_is_named_by_version_and_digest(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    entry = inputs.cached_build()
    assert entry.directory.parent == tmp_path / "dynamo-operator" / "realcluster"
    assert entry.directory.name == f"v1.20.2-{inputs.inputs_digest()}"
    assert len(inputs.inputs_digest()) == 16
    assert not entry.complete()
