extern "C" void wsp_kernel_qkv_proj(char* const* wsp_t, const int64_t* wsp_s, const double*) {
  uint16_t* const p_x = (uint16_t*)wsp_t[0]; const int64_t p_x_rs = wsp_s[0], p_x_cs = wsp_s[1];
  uint16_t* const p_wq = (uint16_t*)wsp_t[1]; const int64_t p_wq_rs = wsp_s[2], p_wq_cs = wsp_s[3];
  uint16_t* const p_wk = (uint16_t*)wsp_t[2]; const int64_t p_wk_rs = wsp_s[4], p_wk_cs = wsp_s[5];
  uint16_t* const p_wv = (uint16_t*)wsp_t[3]; const int64_t p_wv_rs = wsp_s[6], p_wv_cs = wsp_s[7];
  uint16_t* const p_q = (uint16_t*)wsp_t[4]; const int64_t p_q_rs = wsp_s[8], p_q_cs = wsp_s[9];
  uint16_t* const p_k = (uint16_t*)wsp_t[5]; const int64_t p_k_rs = wsp_s[10], p_k_cs = wsp_s[11];
  uint16_t* const p_v = (uint16_t*)wsp_t[6]; const int64_t p_v_rs = wsp_s[12], p_v_cs = wsp_s[13];
  float v_x[8192]; wsp::load<64, 128, wsp::F16>(v_x, p_x, p_x_rs, p_x_cs);
  float v_wq[4096]; wsp::load<128, 32, wsp::F16>(v_wq, p_wq, p_wq_rs, p_wq_cs);
  // %0 = matmul
  float v0[2048]; wsp::matmul<float, 64, 32, 128>(v_x, v_wq, nullptr, v0);
  // %1 = cast
  float v1[2048]; for (int k = 0; k < 2048; ++k) v1[k] = wsp::F16::round((float)v0[k]);
  // %2 = store
  wsp::store<64, 32, wsp::F16>(p_q, p_q_rs, p_q_cs, v1);
  float v_wk[4096]; wsp::load<128, 32, wsp::F16>(v_wk, p_wk, p_wk_rs, p_wk_cs);
  // %3 = matmul
  float v3[2048]; wsp::matmul<float, 64, 32, 128>(v_x, v_wk, nullptr, v3);
  // %4 = cast
  float v4[2048]; for (int k = 0; k < 2048; ++k) v4[k] = wsp::F16::round((float)v3[k]);
  // %5 = store
  wsp::store<64, 32, wsp::F16>(p_k, p_k_rs, p_k_cs, v4);
  float v_wv[4096]; wsp::load<128, 32, wsp::F16>(v_wv, p_wv, p_wv_rs, p_wv_cs);
  // %6 = matmul
  float v6[2048]; wsp::matmul<float, 64, 32, 128>(v_x, v_wv, nullptr, v6);
  // %7 = cast
  float v7[2048]; for (int k = 0; k < 2048; ++k) v7[k] = wsp::F16::round((float)v6[k]);
  // %8 = store
  wsp::store<64, 32, wsp::F16>(p_v, p_v_rs, p_v_cs, v7);
}
