"""The PySpark audit pipeline and its release report."""
