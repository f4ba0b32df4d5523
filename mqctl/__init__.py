"""mqctl: an operations CLI for Apache RocketMQ consumer offsets."""

__version__ = "0.1.0"
