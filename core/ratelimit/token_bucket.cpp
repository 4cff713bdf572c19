// token bucket
