"""The reference model of group membership and the engines that drive targets against it."""
