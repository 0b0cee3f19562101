// libqrencode: the QR code `ferry serve` prints in the terminal for a phone's
// camera (the page's address with its access token).
#ifndef FERRY_CQRENCODE_SHIM_H
#define FERRY_CQRENCODE_SHIM_H

#include <qrencode.h>

#endif
