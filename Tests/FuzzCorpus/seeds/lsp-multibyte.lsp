Content-Length: 86

{"jsonrpc":"2.0","method":"initialize","id":1,"params":{"clientInfo":{"name":"fuzz"}}}Content-Length: 78

{"jsonrpc":"2.0","method":"viewModel/open","id":2,"params":{"type":"catalog"}}Content-Length: 109

{"jsonrpc": "2.0", "method": "catalog/search", "id": 3, "params": {"viewModel": "v1", "query": "café 😀"}}