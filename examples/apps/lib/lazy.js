// Memoize an async loader: the first call starts it, later calls share its promise.
export function lazy(load) {
  let promise;
  return () => (promise ??= load());
}
