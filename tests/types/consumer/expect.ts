// Compile-time assertions: `expectType<T>()(value)` fails to compile unless value's type is
// exactly T (not merely assignable).
type Equal<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;

export function expectType<Expected>() {
  return <Actual>(_value: Actual & (Equal<Actual, Expected> extends true ? unknown : never)): void => {};
}
