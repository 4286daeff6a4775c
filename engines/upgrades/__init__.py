"""Rolling upgrades (``groupcheck upgrade``): what an upgrade plays (`plan`), one upgrade
played on the wire and judged (`play`), and the certification table over the shipped list
of pairs (`table`, ``pairs.txt``)."""
