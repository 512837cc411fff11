import { add } from "./math";

export function twice(x: number): number {
  return add(x, x);
}

export function thrice(x: number): number {
  return add(add(x, x), x);
}
