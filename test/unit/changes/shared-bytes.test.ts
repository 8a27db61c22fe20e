import { SHARED_FROM_BYTES, sharedBytes } from "../../../src/grpc/encode/encode-change";

describe("sharedBytes (watch messages equal byte for byte are held once)", () => {
  it("a large message equal to one held is that one; a different one, or a small one, is its own", () => {
    const plan = (fill: number, size = SHARED_FROM_BYTES) => Buffer.alloc(size, fill);
    const first = sharedBytes(plan(1));
    expect(sharedBytes(plan(1))).toBe(first);
    const other = plan(1);
    other[other.length - 1] = 2; // one byte apart
    expect(sharedBytes(other)).toBe(other);
    expect(sharedBytes(plan(1))).toBe(first);
    const small = plan(1, SHARED_FROM_BYTES - 1);
    expect(sharedBytes(small)).toBe(small);
    expect(sharedBytes(plan(1, SHARED_FROM_BYTES - 1))).not.toBe(small);
  });
});
