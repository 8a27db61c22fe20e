import { decodeReplay, encodeReplay } from "../../../src/storage/tables/write-requests";

describe("the stored form of a remembered write's answer", () => {
  it("round-trips a result: Dates come back as Dates, date-like strings stay strings", () => {
    const result = {
      plan: { title: "2026-11-29T12:00:00.000Z", createdAt: new Date("2026-11-29T12:00:00.000Z") },
      n: 3,
      t: null,
    };
    const back = decodeReplay(encodeReplay(result)) as typeof result;
    expect(back).toEqual(result);
    expect(back.plan.createdAt).toBeInstanceOf(Date);
    expect(typeof back.plan.title).toBe("string");
  });
});
