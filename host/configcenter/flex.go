package configcenter

import "github.com/adminkernel/kernel/host/request"

// flexInt accepts a JSON number or a quoted number (wire contract §1.2).
type flexInt = request.Int64
