"""The fault engine: every fault point of a small scope played on a wire target."""
