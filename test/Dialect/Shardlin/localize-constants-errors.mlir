// RUN: shardlin-opt %s --shardlin-localize-sharded -verify-diagnostics

// A dense_resource whose blob the module does not hold has no value to
// compile: a located error, not an empty global.

func.func @missing() -> tensor<2xf32> {
  // expected-error@+1 {{'shardlin.constant' op dense_resource<missing> has no data: the module's dialect_resources do not define it}}
  %c = shardlin.constant dense_resource<missing> : tensor<2xf32> -> tensor<2xf32>
  return %c : tensor<2xf32>
}
