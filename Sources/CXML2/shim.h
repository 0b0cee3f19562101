// libxml2, for WebDAV's multistatus replies (PROPFIND, DELETE of a folder):
// namespaces and their prefixes, entities and encodings as every server writes
// them. Only the tree parser (xmlReadMemory) and its node walk are used.
#ifndef FERRY_CXML2_SHIM_H
#define FERRY_CXML2_SHIM_H

// Debian builds libxml2 with ICU, whose headers encoding.h would pull in
// clash with the ICU copy inside Foundation ("UErrorCode has different
// definitions"). Ferry never touches the ICU converter fields those headers
// declare (xmlCharEncodingHandler's uconv_in/out, behind pointers libxml2
// owns), so they are left out of this view.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/tree.h>

#endif
