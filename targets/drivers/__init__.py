"""Member drivers shipped with groupcheck (README, "Driving your own client")."""
