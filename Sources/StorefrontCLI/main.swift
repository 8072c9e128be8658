print("storefront")
