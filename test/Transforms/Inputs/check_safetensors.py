"""Prints each tensor of a safetensors file, in the order of its data:
NAME DTYPE SHAPE VALUES (floats as Python floats, f16/bf16 widened), then
"tensors: N". Checks that the data tiles the file. Standard library only."""
import json
import struct
import sys

FORMATS = {"F32": "f", "F64": "d", "I8": "b", "U8": "B", "I16": "h",
           "U16": "H", "I32": "i", "U32": "I", "I64": "q", "U64": "Q",
           "BOOL": "B"}


def values(dtype, raw):
    if dtype == "F16":
        return [struct.unpack("<e", raw[i:i + 2])[0] for i in range(0, len(raw), 2)]
    if dtype == "BF16":
        return [struct.unpack("<f", b"\0\0" + raw[i:i + 2])[0] for i in range(0, len(raw), 2)]
    fmt = FORMATS[dtype]
    n = len(raw) // struct.calcsize(fmt)
    return list(struct.unpack("<%d%s" % (n, fmt), raw))


def main(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    entries = sorted(((v["data_offsets"], k, v) for k, v in header.items()
                      if k != "__metadata__"))
    at = 0
    for (begin, end), name, v in entries:
        assert begin == at, (name, begin, at)
        at = end
        vals = values(v["dtype"], body[begin:end])
        if v["dtype"] == "F64":
            vals = [round(x, 12) for x in vals]
        print(name, v["dtype"], v["shape"], vals)
    assert at == len(body), (at, len(body))
    print("tensors:", len(entries))


main(sys.argv[1])
