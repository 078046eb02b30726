"""inferd's own surface of TorchServe's `ts` package: what handlers import.

Written for inferd (docs/TORCHSERVE.md); it mirrors TorchServe's names and
behaviour, not its code. Loaded only inside handler worker processes.
"""
__version__ = "inferd"
