"""bench.wrk_configs: its wrk script sends every source of the mix as a JSON body, and its configurations parse."""

from __future__ import annotations

import json
import re
from pathlib import Path

from bench.wrk_configs import _config, wrk_script


def test_the_script_posts_every_source_as_json(tmp_path: Path) -> None:
    mix = tmp_path / "inputs.tsv"
    sources = ['Dijo "hola" y se fue.', "Tengo 21 años \\ 3 gatos", "Привет 😀"]
    mix.write_text("".join(f"{s}\t{s}\tplain\n" for s in sources), encoding="utf-8")
    script = wrk_script(mix)
    bodies = [json.loads(body) for body in re.findall(r"\[==\[(.*?)\]==\]", script)]
    assert bodies == [{"inputs": s} for s in sources]
    assert 'wrk.method = "POST"' in script and "request = function()" in script


def test_configurations_parse() -> None:
    assert _config("one=") == ("one", {})
    assert _config("p2=ATENTO_BATCHING__PROCESSES=2,ATENTO_VARIANT=auto") == (
        "p2",
        {"ATENTO_BATCHING__PROCESSES": "2", "ATENTO_VARIANT": "auto"},
    )
