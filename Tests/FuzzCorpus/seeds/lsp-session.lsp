Content-Length: 86

{"jsonrpc":"2.0","method":"initialize","id":1,"params":{"clientInfo":{"name":"fuzz"}}}Content-Length: 75

{"jsonrpc":"2.0","method":"viewModel/open","id":2,"params":{"type":"cart"}}Content-Length: 106

{"jsonrpc":"2.0","method":"cart/add","id":3,"params":{"viewModel":"v1","productId":"p-0001","quantity":2}}Content-Length: 114

{"jsonrpc":"2.0","method":"viewModel/open","id":4,"params":{"type":"productDetail","args":{"productId":"p-0001"}}}Content-Length: 87

{"jsonrpc":"2.0","method":"productDetail/addToCart","id":5,"params":{"viewModel":"v2"}}Content-Length: 120

[{"jsonrpc":"2.0","method":"viewModel/get","id":6,"params":{"viewModel":"v1"}},{"jsonrpc":"2.0","method":"ping","id":7}]Content-Length: 44

{"jsonrpc":"2.0","method":"shutdown","id":8}Content-Length: 33

{"jsonrpc":"2.0","method":"exit"}