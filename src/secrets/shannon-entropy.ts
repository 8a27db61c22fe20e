/**
 * Shannon entropy of a string in bits per character, as gitleaks computes it for a rule's `entropy`
 * threshold: the frequency of each code point over the length. (gitleaks divides by the length in
 * UTF-8 bytes; for the ASCII secrets the rules match the two are the same.)
 */
export function shannonEntropy(text: string): number {
  if (text.length === 0) return 0;
  const counts = new Map<number, number>();
  let length = 0;
  for (const char of text) {
    const code = char.codePointAt(0)!;
    counts.set(code, (counts.get(code) ?? 0) + 1);
    length++;
  }
  let entropy = 0;
  for (const count of counts.values()) {
    const frequency = count / length;
    entropy -= frequency * Math.log2(frequency);
  }
  return entropy;
}
