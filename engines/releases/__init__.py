"""Kafka's releases side by side: the battery on every cell of releases × assignors
(`matrix`, ``groupcheck matrix``), what it writes (`matrix_report`), and a saved
counterexample played on every release to find where it appears and goes (`bisection`)."""
