"""The exceptions of seqpack: one class per error class of the conformance
protocol (protocol/PROTOCOL.md) and of the reference's own misuse checks,
named after it (``invalid_layout`` -> ``InvalidLayout``).

Every one carries ``error_class`` (the protocol's name), ``field`` (the input
at fault, e.g. ``"split_lens[3]"`` or ``"options.cp_world_size"``), ``value``
(that input's value where the call that raised knew it, else None) and
``detail`` (the reference's sentence, which names the value too).
"""

__all__ = ["Error", "InvalidOption", "EmptyBatch", "InvalidLayout", "UndTokenInFullSplit", "LengthMismatch",
           "Overflow", "PadSegmentPairing", "NotDivisible", "ShardedPack", "MetadataMismatch", "InvalidArgument",
           "CLASSES", "from_reference"]


class Error(Exception):
    """A rejected input. ``str(e)`` is the reference's message,
    "<class>: <field>: <detail>"."""

    error_class = None

    def __init__(self, message, field="", detail="", value=None):
        super().__init__(message)
        self.field = field
        self.detail = detail
        self.value = value


def _make(name):
    camel = "".join(part.capitalize() for part in name.split("_"))
    return type(camel, (Error,), {"error_class": name, "__doc__": "Error class %s of the protocol." % name,
                                  "__module__": __name__})


CLASSES = {name: _make(name) for name in (
    "invalid_option", "empty_batch", "invalid_layout", "und_token_in_full_split", "length_mismatch", "overflow",
    "pad_segment_pairing", "not_divisible", "sharded_pack", "metadata_mismatch", "invalid_argument")}
InvalidOption = CLASSES["invalid_option"]
EmptyBatch = CLASSES["empty_batch"]
InvalidLayout = CLASSES["invalid_layout"]
UndTokenInFullSplit = CLASSES["und_token_in_full_split"]
LengthMismatch = CLASSES["length_mismatch"]
Overflow = CLASSES["overflow"]
PadSegmentPairing = CLASSES["pad_segment_pairing"]
NotDivisible = CLASSES["not_divisible"]
ShardedPack = CLASSES["sharded_pack"]
MetadataMismatch = CLASSES["metadata_mismatch"]
InvalidArgument = CLASSES["invalid_argument"]


def from_reference(error_class, field, message):
    """The exception for a reference::Error (called by the extension)."""
    prefix = "%s: %s: " % (error_class, field)
    detail = message[len(prefix):] if message.startswith(prefix) else message
    return CLASSES.get(error_class, Error)(message, field, detail)
