#!/usr/bin/env python3
"""Writes the hand-made seed inputs of every fuzz target into Fuzz/corpus/<Target>/seed-*.

Seeds are real-world shapes (what cards, FTP servers, HTTP servers and browsers
send) plus known awkward cases; the fuzzer's own finds are added by
`scripts/fuzz.sh --update-corpus`. Run again after editing: it rewrites seed-NN only
(other seed-* files, such as JPEGs made with libjpeg, and crash-* inputs stay).
"""
import os
import re
import struct
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def jpeg_with_thumbnail(width=4000, height=3000, orientation=6, big_endian=False, sof=True):
    e = ">" if big_endian else "<"
    thumb = b"\xff\xd8\xff\xfe\x00\x07thumb\xff\xd9"

    def ifd(entries, nxt):
        out = struct.pack(e + "H", len(entries))
        for tag, typ, value in entries:
            if typ == 3:
                out += struct.pack(e + "HHIHH", tag, 3, 1, value, 0)
            else:
                out += struct.pack(e + "HHII", tag, 4, 1, value)
        return out + struct.pack(e + "I", nxt)

    ifd0 = 8
    exif = ifd0 + 2 + 12 * 2 + 4
    ifd1 = exif + 2 + 12 * 2 + 4
    thumb_at = ifd1 + 2 + 12 * 3 + 4
    tiff = (b"MM" if big_endian else b"II") + struct.pack(e + "HI", 42, ifd0)
    tiff += ifd([(0x0112, 3, orientation), (0x8769, 4, exif)], ifd1)
    tiff += ifd([(0xA002, 3, width), (0xA003, 3, height)], 0)
    tiff += ifd([(0x0103, 3, 6), (0x0201, 4, thumb_at), (0x0202, 4, len(thumb))], 0)
    tiff += thumb

    def segment(marker, payload):
        return b"\xff" + bytes([marker]) + struct.pack(">H", len(payload) + 2) + payload

    out = b"\xff\xd8" + segment(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
    out += segment(0xE1, b"Exif\x00\x00" + tiff)
    if sof:
        out += segment(0xC0, b"\x08" + struct.pack(">HH", height, width) + b"\x01\x01\x11\x00")
    out += segment(0xDA, b"\x01\x01\x00\x00\x3f\x00") + b"\x12\x34\xff\x00\x56\xff\xd9"
    return out


def exif_dated(date=b"2024:06:01 23:45:12", subsec=b"25", offset=b"+02:00", orientation=6, big_endian=False,
               raw=False, loop=False):
    """A JPEG (or, with raw, a TIFF-based raw file) whose Exif IFD holds DateTimeOriginal,
    SubSecTimeOriginal and OffsetTimeOriginal; loop makes IFD0's next IFD IFD0 itself."""
    e = ">" if big_endian else "<"
    texts = [(0x9003, date + b"\x00"), (0x9291, subsec + b"\x00"), (0x9011, offset + b"\x00")]
    ifd0 = 8
    exif = ifd0 + 2 + 12 * 2 + 4
    data = exif + 2 + 12 * len(texts) + 4
    out = (b"MM" if big_endian else b"II") + struct.pack(e + "HI", 42, ifd0)
    out += struct.pack(e + "H", 2) + struct.pack(e + "HHIHH", 0x0112, 3, 1, orientation, 0)
    out += struct.pack(e + "HHII", 0x8769, 4, 1, exif) + struct.pack(e + "I", ifd0 if loop else 0)
    out += struct.pack(e + "H", len(texts))
    values = b""
    for tag, value in texts:
        if len(value) <= 4:
            out += struct.pack(e + "HHI", tag, 2, len(value)) + value.ljust(4, b"\x00")
        else:
            out += struct.pack(e + "HHII", tag, 2, len(value), data + len(values))
            values += value
    out += struct.pack(e + "I", 0) + values
    if raw:
        return out
    return b"\xff\xd8\xff\xe1" + struct.pack(">H", len(out) + 8) + b"Exif\x00\x00" + out + b"\xff\xd9"


def heif(thumbnail=True, idat=False, iloc_version=1, wide_meta=False, mdat_first=False):
    """A small HEIC laid out as libheif and phones write it (see Sources/FerryKit/Imaging/HEIF.swift):
    ftyp heic, meta (hdlr, pitm, iloc, iinf, iref thmb, iprp with ispe and ipma), mdat with the
    items' bytes (no real HEVC: the scan never decodes)."""

    def box(t, payload):
        return struct.pack(">I", 8 + len(payload)) + t + payload

    def full(t, version, payload, flags=0):
        return box(t, struct.pack(">I", version << 24 | flags) + payload)

    image, thumb = b"\x00\x00\x00\x10primary image..", b"\x00\x00\x00\x08thumb..."
    items = [(1, image)] + ([(2, thumb)] if thumbnail else [])
    ftyp = box(b"ftyp", b"heic" + bytes(4) + b"mif1heicmiaf")
    ispe = lambda w, h: full(b"ispe", 0, struct.pack(">II", w, h))
    ipco = box(b"ipco", box(b"hvcC", bytes(23)) + ispe(4032, 3024) + ispe(320, 240))
    ipma = full(b"ipma", 0, struct.pack(">I", len(items)) + b"".join(
        struct.pack(">HB", i, 2) + bytes([0x81, i + 1]) for i, _ in items))

    def meta(data_at):
        count = struct.pack(">H", len(items))
        if iloc_version == 0:
            entries = b"".join(struct.pack(">HHIHII", i, 0, data_at[i], 1, 0, len(b)) for i, b in items)
        else:
            method = 1 if idat else 0
            entries = b"".join(struct.pack(">HHHIHII", i, method, 0, data_at[i], 1, 0, len(b)) for i, b in items)
        iloc = full(b"iloc", iloc_version, struct.pack(">H", 0x4440) + count + entries)
        iinf = full(b"iinf", 0, count + b"".join(full(b"infe", 2, struct.pack(">HH", i, 0) + b"hvc1\x00") for i, _ in items))
        iref = full(b"iref", 0, box(b"thmb", struct.pack(">HHH", 2, 1, 1))) if thumbnail else b""
        body = (full(b"hdlr", 0, bytes(4) + b"pict" + bytes(13)) + full(b"pitm", 0, struct.pack(">H", 1)) + iloc + iinf
                + iref + box(b"iprp", ipco + ipma))
        if idat:
            body += box(b"idat", b"".join(b for _, b in items))
        payload = struct.pack(">I", 0) + body
        if wide_meta:
            return struct.pack(">I", 1) + b"meta" + struct.pack(">Q", 16 + len(payload)) + payload
        return box(b"meta", payload)

    data = b"".join(b for _, b in items)
    offsets = {}
    at = 0
    for i, b in items:
        offsets[i] = at
        at += len(b)
    if idat:
        return ftyp + meta(offsets)
    size = len(meta({i: 0 for i in offsets}))
    if mdat_first:
        return ftyp + box(b"mdat", data) + meta({i: len(ftyp) + 8 + o for i, o in offsets.items()})
    return ftyp + meta({i: len(ftyp) + size + 8 + o for i, o in offsets.items()}) + box(b"mdat", data)


def cr3(orientation=6, date=b"2024:06:01 23:45:12", wide_moov=False, zero_mdat=True):
    """A small CR3 laid out as Canon's (see Sources/FerryKit/Imaging/CR3.swift): ftyp crx, moov with
    the Canon uuid (CNCV, CTBO, CMT1 with Orientation, CMT2 with DateTimeOriginal, THMB), the PRVW
    uuid, mdat (size 0: to the end)."""
    jpeg = b"\xff\xd8\xff\xfe\x00\x07thumb\xff\xd9"

    def box(t, payload):
        return struct.pack(">I", 8 + len(payload)) + t + payload

    def tiff(entries):
        out = b"II*\x00" + struct.pack("<IH", 8, len(entries))
        data = b""
        start = 8 + 2 + 12 * len(entries) + 4
        for tag, typ, value in sorted(entries):
            if typ == 3:
                out += struct.pack("<HHIHH", tag, 3, 1, value, 0)
            else:
                out += struct.pack("<HHII", tag, 2, len(value) + 1, start + len(data))
                data += value + b"\x00"
        return out + struct.pack("<I", 0) + data

    canon_id = bytes.fromhex("85c0b687820f11e08111f4ce462b6a48")
    preview_id = bytes.fromhex("eaf42b5e1c984b88b9fbb7dc406e4d16")
    cmt1 = box(b"CMT1", tiff([(0x010F, 2, b"Canon"), (0x0112, 3, orientation)]))
    cmt2 = box(b"CMT2", tiff([(0x9003, 2, date), (0x9011, 2, b"+02:00")]))
    thmb = box(b"THMB", struct.pack(">IHHIHH", 0, 160, 120, len(jpeg), 1, 0) + jpeg)
    canon = box(b"uuid", canon_id + box(b"CNCV", b"CanonCR3_001/00.10.00/00.00.00") + cmt1 + cmt2 + thmb)
    moov_payload = canon + box(b"mvhd", bytes(100))
    if wide_moov:
        moov = struct.pack(">I", 1) + b"moov" + struct.pack(">Q", 16 + len(moov_payload)) + moov_payload
    else:
        moov = box(b"moov", moov_payload)
    prvw = box(b"uuid", preview_id + struct.pack(">II", 0, 1)
               + box(b"PRVW", struct.pack(">IHHHHI", 0, 1, 1620, 1080, 1, len(jpeg)) + jpeg))
    ftyp = box(b"ftyp", b"crx " + struct.pack(">I", 1) + b"crx isom")
    mdat = (struct.pack(">I", 0) if zero_mdat else struct.pack(">I", 20)) + b"mdat" + bytes(12)
    return ftyp + moov + prvw + mdat


def multipart(parts, boundary=b"b0undary", preamble=b"", epilogue=b"", close=True):
    body = preamble
    for headers, content in parts:
        body += b"\r\n--" + boundary + b"\r\n" + headers + b"\r\n\r\n" + content
    if close:
        body += b"\r\n--" + boundary + b"--\r\n" + epilogue
    return body[2:] if not preamble else body


SEEDS = {
    "FlashAirListing": [
        b"WLANSD_FILELIST\r\n/DCIM,100__TSB,0,16,18761,39876\r\n/DCIM,IMG_0001.JPG,2345678,32,18761,39876\r\n",
        b"/DCIM\x00WLANSD_FILELIST\r\n/DCIM,a,b,c.JPG,12,32,18761,39876\r\n/DCIM,.,0,16,0,0\r\n/DCIM,..,0,16,0,0\r\n",
        b"/\x00WLANSD_FILELIST\r\n,DCIM,0,16,18761,39876\r\n,SD_WLAN,0,18,18761,39876\r\n,GUPIXINF,0,22,0,0\r\n",
        b"/dcim/\x00\xef\xbb\xbfWLANSD_FILELIST\n/DCIM,Caf\xc3\xa9 photo.jpg,99999999999999999999,70000,65535,65535\r/DCIM,x,1,1,1\r\n",
        b"/DCIM/100__TSB\x00WLANSD_FILELIST\r\n/dcim/100__tsb,FA000001.JPG, 1234 , 33 ,0,0\r\n/DCIM/100__TSB/,B.JPG,1,32,18761,39876\r\n,a/b,1,32,0,0\r\n",
        b"WLANSD_FILELIST\r\n<html><body>404 Not Found</body></html>\r\n",
    ],
    "FlashAirReply": [
        b"13952920/15228928,512", b"0/0,512\r\n", b"12\r\n", b"1", b"0", b"-20", b"+36", b"56", b"0x4A8B6000",
        b" 18446744073709551615 ", b"9223372036854775807/1,2", b"<html>error</html>",
    ],
    "FTPList": [
        b"total 12\r\ndrwxr-xr-x   2 ftp      ftp          4096 Mar 14 09:12 pub\r\n-rw-r--r--   1 ftp      ftp       1234567 Mar 14  2021 a file.txt\r\nlrwxrwxrwx   1 0 0 7 Jan  1 00:00 link -> target\r\n",
        b"/pub/\x00-rw-r--r--+ 1 owner group 12 2023-03-14 09:12 iso.txt\r\n-rw-r--r-- 1 o g 5 2023-03-14 09:12:30.123456789 +0100 full-iso.txt\n",
        b"-rw-r--r--  1 user  staff  5 Mar 14 09:12:30 2023 bsd.txt\ncrw-rw-rw-  1 root root 1,   3 Mar 14 09:12 null\nbrw-rw----  1 root disk 8, 0 Mar 14 09:12 sda\n",
        b"03-14-23  09:12AM       <DIR>          Photos\r\n03-14-2023  09:12PM            1,234,567 big file.zip\r\n2023-03-14  21:12  <JUNCTION>  link [C:\\target]\r\n",
        b"d [RWCEAFMS] owner  512 Mar 14 09:12 netware\r\n- [R----F--] owner  1234 Mar 14  2022 file.txt\r\n",
        b"drwxr-xr-x 2 ftp ftp 4096 Feb 29 12:00 leap\r\ndrwxr-xr-x 2 ftp ftp 4096 14 Mar 09:12 dmy\r\n-rw-r--r-- 1 ftp ftp 99999999999999999999 Mar 14 09:12 huge\r\n-rw-r--r-- 1 ftp ftp 1 Mar 32 09:12 badday\r\n",
        b"-rw-r--r-- 1 ftp ftp 1 Jan 1 00:00 .\r\n-rw-r--r-- 1 ftp ftp 1 Jan 1 00:00 ..\r\n-rw-r--r-- 1 ftp ftp 1 Jan 1 00:00 a/b\r\n-rw-r--r-- 1 ftp ftp 1 Jan 1 00:00 \r\n",
    ],
    "FTPMLSD": [
        b"type=cdir;modify=20230314091200;perm=flcdmpe; .\r\ntype=pdir;modify=20230314091200; ..\r\ntype=file;size=1234;modify=20230314091200.123;perm=adfrw; a file.txt\r\ntype=dir;sizd=4096;modify=20230314091200; pub\r\n",
        b"/pub\x00Type=OS.unix=slink:/etc/target;Modify=20230314091200; link\r\ntype=OS.unix=symlink; link2\r\ntype=OS.unix=chr-4/64; tty\r\n",
        b" type=file;size=5; /pub/full/path.txt\r\n name without facts\r\ntype=file;size=x; bad\r\ntype=file;modify=2023; bad2\r\nnofacts\r\n",
        b"type=file;size=99999999999999999999; huge\r\ntype=file;perm=r; readonly; name with ; semicolon\r\ntype=cdir; /pub\r\ntype=file; ../escape\r\n",
    ],
    "FTPReplies": [
        b"\x05220 (vsFTPd 3.0.3)\r\n331 Please specify the password.\r\n230 Login successful.\r\n257 \"/home/ferry\" is the current directory\r\n",
        b"\x09211-Features:\r\n EPRT\r\n EPSV\r\n MDTM\r\n MLST type*;size*;modify*;\r\n REST STREAM\r\n SIZE\r\n UTF8\r\n211 End\r\n",
        b"\x03530 Login incorrect.\r\n550 /pub/a: No such file or directory\r\n552 Disk full\r\n421 Timeout.\r\n",
        b"\x11229 Entering Extended Passive Mode (|||21042|)\r\n213 1234\r\n150 Opening BINARY mode\r\n226 Transfer complete\r\n",
        b"\x02500-multi\nline\n500 end\n12\n1234 no\n",
        b"\x01/pub/a\n//x\npub/../b\n/a\rb\n",
    ],
    "RemoteURL": [
        b"flashair://192.168.0.1/DCIM/100__TSB", b"ftp://user:p%40ss@ftp.example.org:2121/pub/a%20b.txt",
        b"ftps://[::1]:990/", b"ftpes://anonymous@host/", b"http://host/a?b=c#frag", b"https://h:443/%E2%82%AC",
        b"file:///tmp/a", b"file://localhost/tmp/a", b"/tmp/local path", b"relative/path", b"gopher://x/",
        b"ftp://user:pa/ss@host/", b"http://user:p?ss@host/", b"ftp://host:99999/", b"ftp://[::1/", b"ftp://h/%ZZ",
        b"ftp://h/a%00b", b"http://u:@h/", b"HTTP://@H/", b"ftp://:pw@host/",
    ],
    "HTTPHeaderLines": [
        b"HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 100-199/1000\r\nETag: \"abc\"\r\nContent-Disposition: attachment; filename=\"a.jpg\"\r\n\r\n",
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n",
        b"HTTP/2 404\r\n:bad\r\nNoColon\r\n  Spaced Name  :  value  \r\nContent-Disposition: attachment; filename*=UTF-8''%E2%82%AC.txt\r\n",
    ],
    "ContentRange": [
        b"bytes 0-99/1000", b"bytes 5-5/*", b"bytes=1-2/3", b"BYTES 0-0/1", b"bytes 9-1/10", b"bytes 0-9/5",
        b"bytes 0-99999999999999999999/1", b"bytes */100", b" bytes  1 - 2 / 3 ",
    ],
    "ContentDisposition": [
        b"attachment; filename=\"a.jpg\"", b"attachment; filename*=UTF-8''%E2%82%AC%20rates.txt; filename=\"EURO rates.txt\"",
        b"inline; filename=\"../../etc/passwd\"", b"attachment; filename=\"a\\\"b;c.txt\"", b"attachment; filename=..",
        b"attachment; filename=\"C:\\\\dir\\\\a.jpg\"", b"attachment; filename*=iso-8859-1'en'%A3.txt",
        b"attachment; filename=\"\x01\x7f\"", b"attachment; filename*=UTF-8''%2F",
    ],
    "EXIFThumbnail": [
        jpeg_with_thumbnail(), jpeg_with_thumbnail(big_endian=True, orientation=1),
        jpeg_with_thumbnail(sof=False), jpeg_with_thumbnail()[:200], b"\xff\xd8\xff\xd9",
    ],
    "CaptureDate": [
        exif_dated(), exif_dated(big_endian=True, offset=b"-05:30"), exif_dated(raw=True, subsec=b"123456789123"),
        exif_dated(raw=True, big_endian=True, loop=True), exif_dated(date=b"0000:00:00 00:00:00"),
        exif_dated(date=b"2024:02:30 12:00:00", offset=b"+99:00"), exif_dated()[:60], jpeg_with_thumbnail(),
    ],
    "CR3Boxes": [
        cr3(), cr3(orientation=3, wide_moov=True), cr3(zero_mdat=False), cr3()[:200],
        cr3().replace(b"CMT2", b"CMTX"), cr3()[:24] + b"\xff\xff\xff\xff" + cr3()[28:],
    ],
    "HEIFMeta": [
        heif(), heif(thumbnail=False), heif(idat=True), heif(iloc_version=0), heif(wide_meta=True),
        heif(mdat_first=True), heif()[:120], heif().replace(b"thmb", b"dimg"), heif().replace(b"ispe", b"ispx"),
    ],
    "ServerQuery": [
        b"/command.cgi?op=100&DIR=/DCIM", b"/thumbnail.cgi?/DCIM/100__TSB/A.JPG", b"/a%20b/c+d?x=1+2&y=%ZZ&&z&=v",
        b"/upload.cgi?UPDIR=/DCIM&FTIME=0x4A8B6000", b"/%E2%82%AC?%E2%82%AC=%FF%FE", b"/?", b"?a", b"/%2", b"/%%41",
    ],
    "ServerRange": [
        b"bytes=0-", b"bytes=-5", b"bytes=5-10", b"bytes=0-0,5-6", b"bytes=10-5", b"Bytes = 1-2", b"bytes=-0",
        b"bytes=99999999999999999999-", b"items=0-1", b"\"1-2-3\"", b"W/\"1-2-3\"",
    ],
    "ServerHeaderParameters": [
        b"multipart/form-data; boundary=\"----WebKitFormBoundary7MA4YWxkTrZu0gW\"",
        b"multipart/form-data; boundary=b0undary; charset=utf-8",
        b"form-data; name=\"file\"; filename=\"C:\\dir\\a.jpg\"",
        b"Content-Disposition: form-data; name=\"a\";\r\n filename=\"folded.txt\"\r\nContent-Type: image/jpeg\r\n",
        b"form-data; name=\"unterminated; filename=x", b"form-data; ; =; name=; filename=\"a\\\\b\\\"c\"",
    ],
    "ServerMultipart": [
        b"\x07" + multipart([(b'Content-Disposition: form-data; name="a"', b"value"),
                              (b'Content-Disposition: form-data; name="file"; filename="a.jpg"\r\nContent-Type: image/jpeg', b"\xff\xd8 jpeg bytes \r\n-- not a boundary \xff\xd9")]),
        b"\x01" + multipart([(b'Content-Disposition: form-data; name="f"; filename="x"', b"")], preamble=b"preamble text\r\n", epilogue=b"epilogue"),
        b"\x02" + multipart([(b"", b"no headers")]),
        b"\x03" + multipart([(b'Content-Disposition: form-data; name="a"', b"v")], close=False),
        b"\x04" + multipart([(b'Content-Disposition: form-data; name="big"', b"x" * 200)]),
        b"\x05" + multipart([(b"X: " + b"h" * 70, b"long headers")]),
        b"\x06" + multipart([(b'Content-Disposition: form-data; name="p%d"' % i, b"v") for i in range(8)]),
        b"\x08--b0undary  \t \r\nContent-Disposition: form-data; name=a\r\n\r\nv\r\n--b0undary--",
    ],
    "CardRequest": [
        b"/command.cgi?op=100&DIR=/DCIM", b"/command.cgi?op=100&DIR=/DCIM/100__TSB", b"/command.cgi?op=101&DIR=/",
        b"/command.cgi?op=102", b"/command.cgi?op=130&ADDR=0&LEN=16", b"/command.cgi?op=131&ADDR=500&LEN=12&DATA=hello",
        b"/command.cgi?op=140", b"/command.cgi?op=221", b"/upload.cgi?WRITEPROTECT=ON&UPDIR=/DCIM/NEW&FTIME=0x4A8B6000",
        b"/upload.cgi?DEL=/DCIM/100__TSB/B.TXT", b"/thumbnail.cgi?/DCIM/100__TSB/A.JPG", b"/DCIM/100__TSB/A.JPG\x00bytes=0-2",
        b"/config.cgi?MASTERCODE=0123456789AB&TIMEZONE=36", b"/link-out/secret.txt", b"/%2e%2e/outside/secret.txt",
        b"http://flashair/command.cgi?op=100&DIR=/link-out", b"/DCIM/abs-out/secret.txt", b"/DCIM/inside/A.JPG",
        b"/upload.cgi?DEL=/link-out", b"/upload.cgi?UPDIR=/link-out/victims", b"/command.cgi?op=100&DIR=/DCIM/../..",
        b"/thumbnail.cgi?/link-file", b"/dangling",
    ],
    "WebPath": [
        b"/", b"/DCIM/100FERRY/A.JPG", b"//DCIM//x/", b"/a/../b", b"/%2e%2e/x", b"/%252e%252e/x", b"/%25252e/x",
        b"/a\\b", b"/a\x00b", b"relative/x", b"/\xc0\xae\xc0\xae/x", b"/" + b"a" * 300, b"/%2f/x", b"/.%2e/x",
    ],
    "WebAccess": [
        b"GET /api/list?path=/\nHost: 127.0.0.1:8080",
        b"POST /api/delete\nHost: 127.0.0.1:8080\nOrigin: http://127.0.0.1:8080",
        b"GET /?token=0123456789abcdef0123456789abcdef&path=/DCIM\nHost: 192.168.1.5:8080",
        b"GET //evil.example/?token=0123456789abcdef0123456789abcdef\nHost: 10.0.0.1",
        b"POST /api/mkdir\nHost: localhost\nReferer: http://localhost/x\nCookie: a=b; ferry_token=0123456789abcdef0123456789abcdef",
        b"GET /api/list\nHost: [::1]:80\nX-Ferry-Token: wrong",
        b"GET /api/list\nHost: 127.0.0.1.evil.example\n",
        b"POST /api/rename\nHost: 127.0.0.1:1\nOrigin: http://127.0.0.1:1.evil.example",
    ],
    "WebRequest": [
        b"GET /api/source", b"GET /api/list?path=/", b"GET /api/list?path=/DCIM/100FERRY", b"GET /api/stat?path=/link-out",
        b"GET /api/file?path=/DCIM/100FERRY/A.JPG", b"GET /api/file?path=/link-file.jpg&download=1",
        b"GET /api/thumb?path=/DCIM/100FERRY/A.JPG", b"GET /api/thumb?path=/link-file.jpg",
        b"GET /api/list?path=/DCIM/abs-out", b"GET /api/list?path=/DCIM/inside", b"GET /api/list?path=/%2e%2e",
        b'POST /api/mkdir\n{"path": "/DCIM/new"}', b'POST /api/mkdir\n{"path": "/link-out/new"}',
        b'POST /api/delete\n{"path": "/link-out"}', b'POST /api/delete\n{"path": "/DCIM/100FERRY/B.TXT"}',
        b'POST /api/rename\n{"path": "/DCIM/100FERRY/B.TXT", "name": "C.TXT"}',
        b'POST /api/rename\n{"path": "/DCIM/100FERRY/B.TXT", "name": "../../outside/victims/x"}',
        b'POST /api/connect\n{"url": "file:///etc"}', b"GET /index.html", b"GET /app.js", b"GET /../../etc/passwd",
        b"GET /api/list?path=/dangling", b"POST /api/upload?path=/DCIM\n",
    ],
    "JPEGDecode": [jpeg_with_thumbnail(), jpeg_with_thumbnail(big_endian=True)],
}


def main():
    for target, seeds in SEEDS.items():
        folder = os.path.join(ROOT, target)
        os.makedirs(folder, exist_ok=True)
        for name in os.listdir(folder):
            if re.fullmatch(r"seed-\d\d", name):
                os.remove(os.path.join(folder, name))
        for i, seed in enumerate(seeds):
            with open(os.path.join(folder, "seed-%02d" % i), "wb") as f:
                f.write(seed)
    print("seeds written to", ROOT, file=sys.stderr)


if __name__ == "__main__":
    main()
