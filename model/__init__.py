"""The reference model of group membership and the engines that drive targets against it."""

__all__: list[str] = []
