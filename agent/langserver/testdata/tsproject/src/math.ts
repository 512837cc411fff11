// add returns the sum of a and b.
export function add(a: number, b: number): number {
  return a + b;
}
