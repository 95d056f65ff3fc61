// video_reader.cpp: libavformat demux + libavcodec decode, native planes + swscale to RGB24, validating every step.
#include "video_reader.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>

#include "common/sha256.h"
#include "pixel_format_conversion.h"

namespace fuseproof::e2e {
namespace {

std::string av_error(int err) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {0};
  av_strerror(err, buf, sizeof(buf));
  return buf;
}

struct Reader {
  std::string path;
  AVFormatContext* fc = nullptr;
  AVCodecContext* dec = nullptr;
  SwsContext* sws = nullptr;
  SwsContext* sws_planes = nullptr;  // decoder format -> metrics format, when they differ
  AVPacket* pkt = av_packet_alloc();
  AVFrame* frame = av_frame_alloc();
  int width = 0, height = 0;
  AVPixelFormat fmt = AV_PIX_FMT_NONE;
  DecodedVideo out;
  bool exists = false;  ///< past the existence checks: every later failure is the content's (CorruptVideoError)

  ~Reader() {
    sws_freeContext(sws);
    sws_freeContext(sws_planes);
    av_frame_free(&frame);
    av_packet_free(&pkt);
    avcodec_free_context(&dec);
    avformat_close_input(&fc);
  }

  [[noreturn]] void fail(const std::string& why) const {
    if (exists) throw CorruptVideoError("'" + path + "': " + why);
    throw VideoError("'" + path + "': " + why);
  }

  void take_frame() {
    if (out.frames.count == 0) {
      width = frame->width;
      height = frame->height;
      fmt = static_cast<AVPixelFormat>(frame->format);
      if (width < 1 || height < 1 || fmt == AV_PIX_FMT_NONE) fail("decoded frame has no size or pixel format");
      const char* name = av_get_pix_fmt_name(fmt);
      out.pixel_format = name ? name : "unknown";
      out.frames.width = width;
      out.frames.height = height;
      sws = sws_getContext(width, height, fmt, width, height, AV_PIX_FMT_RGB24,
                           SWS_POINT | SWS_ACCURATE_RND | SWS_BITEXACT | SWS_FULL_CHR_H_INT, nullptr, nullptr, nullptr);
      if (!sws) fail("cannot convert pixel format " + out.pixel_format + " to rgb24");
      try {
        const std::string mf = metrics_format_for(out.pixel_format);
        out.planes = planar_layout(mf, width, height);
      } catch (const std::invalid_argument& e) {
        fail(e.what());
      }
      if (out.planes.pixel_format != out.pixel_format) {
        out.metrics_conversion = out.pixel_format + " -> " + out.planes.pixel_format + " (swscale point, repacking)";
        sws_planes = sws_getContext(width, height, fmt, width, height, av_get_pix_fmt(out.planes.pixel_format.c_str()),
                                    SWS_POINT | SWS_ACCURATE_RND | SWS_BITEXACT | SWS_FULL_CHR_H_INT | SWS_FULL_CHR_H_INP,
                                    nullptr, nullptr, nullptr);
        if (!sws_planes) fail("cannot convert pixel format " + out.pixel_format + " to " + out.planes.pixel_format);
      }
    } else if (frame->width != width || frame->height != height || frame->format != fmt) {
      fail("frame " + std::to_string(out.frames.count) + " changes size or pixel format");
    }
    take_planes();
    const size_t bytes = out.frames.frame_bytes();
    out.frames.rgb.resize(bytes * static_cast<size_t>(out.frames.count + 1));
    uint8_t* dst[4] = {out.frames.rgb.data() + bytes * static_cast<size_t>(out.frames.count), nullptr, nullptr, nullptr};
    int dst_stride[4] = {width * 3, 0, 0, 0};
    if (sws_scale(sws, frame->data, frame->linesize, 0, height, dst, dst_stride) != height) {
      fail("rgb24 conversion failed at frame " + std::to_string(out.frames.count));
    }
    ++out.frames.count;
  }

  void take_planes() {
    PlanarVideo& v = out.planes;
    v.data.resize(v.frame_bytes() * static_cast<size_t>(out.frames.count + 1));
    uint8_t* dst[4] = {nullptr, nullptr, nullptr, nullptr};
    int dst_stride[4] = {0, 0, 0, 0};
    for (int p = 0; p < v.planes; ++p) {
      dst[p] = v.plane(out.frames.count, p);
      dst_stride[p] = v.plane_width(p);
    }
    if (sws_planes) {
      if (sws_scale(sws_planes, frame->data, frame->linesize, 0, height, dst, dst_stride) != height) {
        fail(v.pixel_format + " conversion failed at frame " + std::to_string(out.frames.count));
      }
    } else {
      for (int p = 0; p < v.planes; ++p) {
        av_image_copy_plane(dst[p], dst_stride[p], frame->data[p], frame->linesize[p], v.plane_width(p),
                            v.plane_height(p));
      }
    }
    v.count = out.frames.count + 1;
  }

  void receive() {
    for (;;) {
      const int err = avcodec_receive_frame(dec, frame);
      if (err == AVERROR(EAGAIN) || err == AVERROR_EOF) return;
      if (err < 0) fail("decode error after frame " + std::to_string(out.frames.count) + ": " + av_error(err));
      if (frame->decode_error_flags || (frame->flags & AV_FRAME_FLAG_CORRUPT)) {
        fail("corrupt frame " + std::to_string(out.frames.count));
      }
      take_frame();
      av_frame_unref(frame);
    }
  }
};

}  // namespace

DecodedVideo read_video(const std::string& path) {
  av_log_set_level(AV_LOG_QUIET);
  Reader r;
  r.path = path;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) r.fail("no such file");
  if (!std::filesystem::is_regular_file(path, ec)) r.fail("not a regular file");
  r.exists = true;
  if (std::filesystem::file_size(path, ec) == 0) r.fail("file is empty");
  if (!r.pkt || !r.frame) r.fail("out of memory");
  try {
    r.out.container_sha256 = Sha256::of_file(path);
  } catch (const std::exception& e) {
    throw VideoError(e.what());
  }
  int err = avformat_open_input(&r.fc, path.c_str(), nullptr, nullptr);
  if (err < 0) r.fail("not a readable video (" + av_error(err) + ")");
  err = avformat_find_stream_info(r.fc, nullptr);
  if (err < 0) r.fail("cannot read stream info (" + av_error(err) + ")");
  r.out.container = r.fc->iformat->name;
  const AVCodec* codec = nullptr;
  const int si = av_find_best_stream(r.fc, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
  if (si < 0 || !codec) r.fail(si == AVERROR_DECODER_NOT_FOUND ? "no decoder for its video stream" : "no video stream");
  const AVStream* st = r.fc->streams[si];
  r.out.codec = codec->name;
  r.dec = avcodec_alloc_context3(codec);
  if (!r.dec) r.fail("out of memory");
  if ((err = avcodec_parameters_to_context(r.dec, st->codecpar)) < 0) r.fail("bad codec parameters (" + av_error(err) + ")");
  r.dec->thread_count = 1;
  r.dec->flags |= AV_CODEC_FLAG_BITEXACT;
  r.dec->err_recognition = AV_EF_EXPLODE | AV_EF_CRCCHECK | AV_EF_BITSTREAM;  // a damaged stream is an error
  if ((err = avcodec_open2(r.dec, codec, nullptr)) < 0) r.fail("cannot open decoder (" + av_error(err) + ")");
  int64_t packets = 0;
  int64_t consumed = 0;  // end of the last packet in the file, for raw containers' truncation check
  for (;;) {
    err = av_read_frame(r.fc, r.pkt);
    if (err == AVERROR_EOF) break;
    if (err < 0) r.fail("read error after " + std::to_string(packets) + " packets (" + av_error(err) + ")");
    if (r.pkt->stream_index == si) {
      ++packets;
      if (r.pkt->pos >= 0) consumed = std::max<int64_t>(consumed, r.pkt->pos + r.pkt->size);
      if (r.pkt->flags & AV_PKT_FLAG_CORRUPT) {
        r.fail("truncated or damaged: packet " + std::to_string(packets) + " of the " + std::to_string(st->nb_frames) +
               " the container lists is cut short or corrupt");
      }
      err = avcodec_send_packet(r.dec, r.pkt);
      if (err < 0 && err != AVERROR(EAGAIN)) {
        r.fail("decode error at packet " + std::to_string(packets) + " (" + av_error(err) + ")");
      }
      r.receive();
    }
    av_packet_unref(r.pkt);
  }
  avcodec_send_packet(r.dec, nullptr);
  r.receive();
  if (r.out.frames.count == 0) r.fail("no frames decoded");
  // Raw containers (Y4M) end silently at a partial frame: bytes left after the last whole frame mean truncation.
  const std::string demuxer = r.out.container;
  if (demuxer == "yuv4mpegpipe" || demuxer == "rawvideo") {
    const auto size = static_cast<int64_t>(std::filesystem::file_size(path, ec));
    if (!ec && size > consumed) {
      r.fail("truncated: " + std::to_string(size - consumed) + " bytes after frame " +
             std::to_string(r.out.frames.count) + " do not form a whole frame");
    }
  }
  if (st->nb_frames > 0 && st->nb_frames != r.out.frames.count) {
    r.fail("truncated: the container lists " + std::to_string(st->nb_frames) + " frames, " +
           std::to_string(r.out.frames.count) + " decoded");
  }
  return std::move(r.out);
}

}  // namespace fuseproof::e2e
