// The result type is the input type; only the generic form can say otherwise.
func.func @bias_add_result_type(%y: tensor<5x11xf32>, %b: tensor<11xf32>) {
  // expected-error@+1 {{'shardlin.bias_add' op failed to verify that all of {input, result} have same type}}
  %0 = "shardlin.bias_add"(%y, %b) : (tensor<5x11xf32>, tensor<11xf32>) -> tensor<5x10xf32>
  return
}
