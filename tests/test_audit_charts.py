"""The audit report's SVG plots (``audit/charts.py``): well-formed, one line per target,
points where the values put them."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from groupcheck.audit.charts import heatmap, line_chart

NS = "{http://www.w3.org/2000/svg}"


def _points(polyline: ET.Element) -> list[tuple[float, float]]:
    return [(float(a), float(b)) for a, b in
            (p.split(",") for p in polyline.attrib["points"].split())]


def test_a_line_chart_draws_each_target_through_its_buckets_in_order() -> None:
    xs = ["1", "2-3", "4-7", "8-15"]
    series = {"builtin:range": [("1", 0.0), ("2-3", 1.5), ("4-7", 3.0)],
              "builtin:sticky <&>": [("2-3", 0.5), ("8-15", 6.0)]}
    root = ET.fromstring(line_chart("moves vs group size", "members", "moves", xs, series))
    lines = root.findall(f"{NS}polyline")
    assert len(lines) == 2
    first, second = (_points(line) for line in lines)
    assert [x for x, _ in first] == sorted(x for x, _ in first)
    assert first[0][1] > first[1][1] > first[2][1]  # larger values higher up (smaller y)
    assert second[0][0] == first[1][0]  # the same bucket, the same column
    assert second[1][0] > first[2][0]
    texts = "".join(t.text or "" for t in root.iter(f"{NS}text"))
    assert "builtin:sticky <&>" in texts and "moves vs group size" in texts


def test_a_log_chart_spans_powers_of_ten_and_skips_zero() -> None:
    root = ET.fromstring(line_chart("time", "members", "ms", ["1", "2-3", "4-7"],
                                    {"t": [("1", 0.0), ("2-3", 0.4), ("4-7", 250.0)]},
                                    log=True))
    (line,) = root.findall(f"{NS}polyline")
    assert len(_points(line)) == 2
    labels = [t.text for t in root.iter(f"{NS}text")]
    assert {"0.1", "1", "10", "100", "1000"} <= set(labels)


def test_a_heatmap_labels_every_cell_and_reddens_with_the_share() -> None:
    root = ET.fromstring(heatmap("disagreement", ["a", "b"], [[0.0, 0.25], [1.0, 0.0]]))
    cells = [r for r in root.findall(f"{NS}rect") if r.attrib.get("stroke") == "#ccc"]
    assert len(cells) == 4
    fills = [c.attrib["fill"] for c in cells]
    assert fills[0] == "rgb(255,255,255)" and fills[2] == "rgb(255,0,0)"
    assert fills[1] == "rgb(255,191,191)"
    labels = [t.text for t in root.iter(f"{NS}text")]
    assert labels.count("0.00") == 2 and "0.25" in labels and "1.00" in labels
