"""The link between servers as people type it (``100GbE``, ``ib-ndr``, ``Thunderbolt 5``),
read once in the answer layer (issue 35); the engine takes an Interconnect id."""

from __future__ import annotations

import re

from whichgpu.estimate.interconnect import Interconnect, interconnect_of

# other spellings people write (case and spaces are ignored before this lookup)
_ALIASES = {
    "10g": "10gbe", "10gbit": "10gbe", "10ge": "10gbe", "25g": "25gbe", "25ge": "25gbe",
    "100g": "100gbe", "100ge": "100gbe", "200g": "200gbe", "400g": "400gbe",
    "hdr": "ib-hdr", "ndr": "ib-ndr", "xdr": "ib-xdr", "infiniband-hdr": "ib-hdr",
    "infiniband-ndr": "ib-ndr", "infiniband-xdr": "ib-xdr", "ib": "ib-ndr",
    "infiniband": "ib-ndr", "roce": "roce-400", "rocev2": "roce-400",
    "thunderbolt4": "tb4", "thunderbolt-4": "tb4", "thunderbolt5": "tb5",
    "thunderbolt-5": "tb5", "thunderbolt": "tb4", "tb5rdma": "tb5-rdma",
    "thunderbolt5-rdma": "tb5-rdma", "thunderbolt-5-rdma": "tb5-rdma",
}



def parse_interconnect(text: str | Interconnect | None) -> Interconnect | None:
    """The link a user named (``100GbE``, ``ib-ndr``, ``Thunderbolt 5``); None stays None.
    Anything else is an input error that lists the links."""
    if text is None or text == "":
        return None
    if isinstance(text, Interconnect):
        return text
    key = re.sub(r"[\s_]+", "-", str(text).strip().lower()).replace("gb/s", "g")
    key = _ALIASES.get(key, _ALIASES.get(key.replace("-", ""), key))
    try:
        return Interconnect(key)
    except ValueError:
        return interconnect_of(str(text))  # the error that lists the links
