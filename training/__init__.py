"""Scripts that train what the product ships. Their own extra (`train`); the product never imports them."""
